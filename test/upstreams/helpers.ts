import { mkdtempSync, readFileSync, writeFileSync, existsSync } from 'node:fs'
import { createRequire } from 'node:module'
import { tmpdir } from 'node:os'
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'

const require = createRequire(import.meta.url)

/** The entry file of an MCP server package installed as a dev dependency. */
function serverEntry (name: string): string {
  const manifest = require.resolve(`${name}/package.json`)
  const bin = (JSON.parse(readFileSync(manifest, 'utf8')) as { bin: string | Record<string, string> }).bin
  return join(dirname(manifest), typeof bin === 'string' ? bin : Object.values(bin)[0]!)
}

export const EVERYTHING = serverEntry('@modelcontextprotocol/server-everything')
export const FILESYSTEM = serverEntry('@modelcontextprotocol/server-filesystem')
export const MEMORY = serverEntry('@modelcontextprotocol/server-memory')
const FIXTURE = fileURLToPath(new URL('../fixtures/mcp-upstream/server.mjs', import.meta.url))

export function tempDir (prefix = 'toolgate-upstream-'): string {
  return mkdtempSync(join(tmpdir(), prefix))
}

/** An upstreams file in a temp folder; its path. */
export function upstreamsFile (content: Record<string, unknown>): string {
  const path = join(tempDir(), 'mcp.json')
  writeFileSync(path, JSON.stringify(content, null, 2))
  return path
}

/** The stdio entry of the fault fixture, logging what it receives into `dir`. */
export function fixture (dir: string, env: Record<string, string> = {}): Record<string, unknown> {
  return { command: process.execPath, args: [FIXTURE], env: { FIXTURE_DIR: dir, ...env } }
}

/** The lines a fixture wrote to `file` in `dir` (none yet: empty). */
export function linesOf (dir: string, file: string): string[] {
  const path = join(dir, file)
  return existsSync(path) ? readFileSync(path, 'utf8').split('\n').filter(line => line !== '') : []
}

/** Wait (polling) until `check` holds; fails with `what` after `ms`. */
export async function eventually (check: () => boolean | Promise<boolean>, what: string, ms = 15_000): Promise<void> {
  const until = Date.now() + ms
  while (!await check()) {
    if (Date.now() > until) throw new Error(`timed out waiting until ${what}`)
    await new Promise(resolve => setTimeout(resolve, 25))
  }
}

export function isRunning (pid: number): boolean {
  try {
    process.kill(pid, 0)
    return true
  } catch {
    return false
  }
}
