import { createHash } from 'node:crypto'
import { readdirSync, readFileSync } from 'node:fs'
import { extname, join } from 'node:path'
import { pathToFileURL } from 'node:url'

/** The query parameters a versioned module URL carries (read by the module hooks too). */
const VERSION_PARAM = 'toolgate'
const RETRY_PARAM = 'toolgate-retry'
export const HELPERS_PARAM = 'toolgate-helpers'
export const ROOT_PARAM = 'toolgate-root'

const SOURCE_EXTENSIONS = new Set(['.ts', '.mts', '.cts', '.js', '.mjs', '.cjs', '.json'])
/** What the loader imports at the top level (each by its own hash, so not part of the helpers'). */
const TOOL_MODULE = /\.(ts|js|mts|mjs)$/

/** The helpers' fingerprint at a folder's first load in this process. */
const firstHelpers = new Map<string, string>()

/**
 * The URL a tool module is imported by: its content's hash, so a module that did not change is
 * the one already loaded (same declarations, same state, no new memory), and a changed one is
 * imported afresh. Node never unloads an ES module; a reload costs memory for changed files only.
 *
 * Helpers (files below the folder's top level) are imported by the tool modules, not by the
 * loader: while they are as they were at the folder's first load, they keep their plain URLs
 * and the state they hold (the shipped notes and ledger keep their entries). Once any of them
 * changed, the URL names their new fingerprint, and the module hooks (`module-hooks.ts`) pass
 * it on to every helper the module imports from the folder, so no module runs stale code.
 */
export function versionedUrl (file: string, root: string, helpers: string, retry = 0): { readonly url: string, readonly freshHelpers: boolean } {
  const url = pathToFileURL(file)
  url.searchParams.set(VERSION_PARAM, digest(readFileSync(file)))
  if (retry > 0) url.searchParams.set(RETRY_PARAM, String(retry))
  if (!firstHelpers.has(root)) firstHelpers.set(root, helpers)
  const freshHelpers = firstHelpers.get(root) !== helpers
  if (freshHelpers) {
    url.searchParams.set(HELPERS_PARAM, helpers)
    url.searchParams.set(ROOT_PARAM, root)
  }
  return { url: url.href, freshHelpers }
}

/**
 * One hash over the path and content of every source file below `root`'s top level, and of the
 * top level's files that are not tool modules (JSON, CommonJS a tool reads): node_modules and
 * dot-folders aside.
 */
export function helpersFingerprint (root: string): string {
  const hash = createHash('sha256')
  const walk = (dir: string, depth: number): void => {
    let entries
    try {
      entries = readdirSync(dir, { withFileTypes: true })
    } catch {
      return
    }
    for (const entry of entries.sort((a, b) => (a.name < b.name ? -1 : 1))) {
      if (entry.name === 'node_modules' || entry.name.startsWith('.')) continue
      const path = join(dir, entry.name)
      if (entry.isDirectory()) walk(path, depth + 1)
      else if (entry.isFile() && SOURCE_EXTENSIONS.has(extname(entry.name)) && (depth > 0 || !TOOL_MODULE.test(entry.name))) hash.update(path).update('\0').update(readFileSync(path)).update('\0')
    }
  }
  walk(root, 0)
  return hash.digest('hex').slice(0, 16)
}

function digest (content: Buffer): string {
  return createHash('sha256').update(content).digest('hex').slice(0, 16)
}
