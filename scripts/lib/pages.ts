import { readdirSync } from 'node:fs'
import { fileURLToPath } from 'node:url'

/** The repository's root folder, ending in a slash. */
export const ROOT = fileURLToPath(new URL('../..', import.meta.url))

/** The pages users read, relative to the repository: README.md, then docs/*.md in name order. */
export function documentPaths (): string[] {
  const docs = readdirSync(`${ROOT}docs`).filter(name => name.endsWith('.md')).sort()
  return ['README.md', ...docs.map(name => `docs/${name}`)]
}
