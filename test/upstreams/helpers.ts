import { spawn, type ChildProcess } from 'node:child_process'
import { mkdtempSync, readFileSync, writeFileSync, existsSync } from 'node:fs'
import { createRequire } from 'node:module'
import { tmpdir } from 'node:os'
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'

import { freePort } from '../../scripts/lib/free-port.js'
import { Client } from '@modelcontextprotocol/sdk/client/index.js'
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js'

export { freePort }

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

/** A petstore document of `@readme/oas-examples` (`3.0` or `3.1`). */
export function petstore (version: '3.0' | '3.1'): string {
  return require.resolve(`@readme/oas-examples/${version}/json/petstore.json`)
}

export interface Prism {
  readonly url: string
  readonly stop: () => void
}

/** Prism (`@stoplight/prism-cli`) mocking `document` on loopback, in its own process group; resolves once it listens. */
export async function startPrism (document: string): Promise<Prism> {
  const port = await freePort()
  const bin = join(dirname(require.resolve('@stoplight/prism-cli/package.json')), 'dist', 'index.js')
  const child = spawn(process.execPath, [bin, 'mock', '-h', '127.0.0.1', '-p', String(port), document], { detached: true, stdio: ['ignore', 'pipe', 'pipe'] })
  const stop = (): void => {
    try {
      process.kill(-child.pid!, 'SIGKILL')
    } catch {}
  }
  await new Promise<void>((resolve, reject) => {
    let said = ''
    const look = (data: Buffer): void => {
      said += String(data)
      if (said.includes('Prism is listening')) resolve()
    }
    child.stdout!.on('data', look)
    child.stderr!.on('data', look)
    child.once('exit', code => { reject(new Error(`prism exited with ${String(code)}: ${said.slice(-500)}`)) })
  })
  return { url: `http://127.0.0.1:${port}`, stop }
}

/** Start a server script that says `PORT n` (or listens on the PORT it is given): its port; its process joins `children`, for the caller to stop. */
export async function serverScript (args: string[], env: Record<string, string>, children: ChildProcess[]): Promise<{ port: number, child: ChildProcess }> {
  const port = env.PORT === undefined ? 0 : Number(env.PORT)
  const child = spawn(process.execPath, args, { env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'pipe'] })
  children.push(child)
  const found = await new Promise<number>((resolve, reject) => {
    const look = (data: Buffer): void => {
      const said = /PORT (\d+)|listening on port (\d+)/i.exec(String(data))
      if (said !== null) resolve(Number(said[1] ?? said[2]))
    }
    child.stdout!.on('data', look)
    child.stderr!.on('data', look)
    child.once('exit', code => { reject(new Error(`the server exited with ${String(code)}`)) })
  })
  return { port: port === 0 ? found : port, child }
}

/**
 * server-everything over stdio (the 2025-11-25 era) and the 2026-07-28 fixture server over
 * HTTP, started (the fixture's process joins `children`): the `mcpServers` of an upstreams file.
 */
export async function bothEras (children: ChildProcess[]): Promise<Record<string, unknown>> {
  const modern = await serverScript([fileURLToPath(new URL('../fixtures/mcp-upstream/modern.mjs', import.meta.url))], {}, children)
  return {
    everything: { command: process.execPath, args: [EVERYTHING, 'stdio'] },
    modern: { type: 'http', url: `http://127.0.0.1:${modern.port}/mcp` },
  }
}

/** server-everything over stdio, as the `mcpServers` entry of an upstreams file. */
export const EVERYTHING_SERVER = { command: process.execPath, args: [EVERYTHING, 'stdio'] }

/** The official SDK client connected to a server-everything of its own: what the server answers when asked directly. */
export async function directEverything (): Promise<Client> {
  const client = new Client({ name: 'direct', version: '1.0.0' })
  await client.connect(new StdioClientTransport({ command: process.execPath, args: [EVERYTHING, 'stdio'], stderr: 'ignore' }))
  return client
}
