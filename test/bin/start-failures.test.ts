import { spawn } from 'node:child_process'
import { once } from 'node:events'
import { mkdirSync, writeFileSync } from 'node:fs'
import { createServer, type Server } from 'node:net'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { afterEach, describe, expect, it } from 'vitest'
import { SLOW } from '../slow.js'
import { EVERYTHING, isRunning, tempDir } from '../upstreams/helpers.js'

/*
 * A gateway that cannot start stops: a non-zero exit, one line naming the cause on stderr, and
 * nothing it opened left behind (an upstream's child, Redis, the audit file). The built
 * command, as an orchestrator runs it.
 */
const bin = join(fileURLToPath(new URL('../..', import.meta.url)), 'dist/bin/toolgate.js')
const servers: Server[] = []
afterEach(async () => { await Promise.all(servers.splice(0).map(async server => { server.close(); await once(server, 'close') })) })

interface Ended { readonly code: number | null, readonly stderr: string, readonly stdout: string }

async function run (args: string[], env: Record<string, string>, cwd: string): Promise<Ended> {
  const child = spawn(process.execPath, [bin, ...args], { cwd, env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '', ...env } })
  let stderr = ''
  let stdout = ''
  child.stderr.on('data', (chunk: Buffer) => { stderr += chunk.toString() })
  child.stdout.on('data', (chunk: Buffer) => { stdout += chunk.toString() })
  const timer = setTimeout(() => { child.kill('SIGKILL') }, SLOW.PROCESS_MS / 2)
  const [code] = await once(child, 'exit') as [number | null]
  clearTimeout(timer)
  return { code, stderr, stdout }
}

async function takenPort (): Promise<number> {
  const server = createServer().listen(0, '127.0.0.1')
  servers.push(server)
  await once(server, 'listening')
  return (server.address() as { port: number }).port
}

/** The pids of the upstream children the gateway started, from its log. */
function childPids (stdout: string): number[] {
  return stdout.split('\n').flatMap(line => {
    try {
      const entry = JSON.parse(line) as { msg?: string, childPid?: number }
      return entry.msg === 'upstream connected' && entry.childPid !== undefined ? [entry.childPid] : []
    } catch {
      return []
    }
  })
}

describe('a gateway that cannot start stops', { timeout: SLOW.PROCESS_MS }, () => {
  it('a port in use, with a stdio upstream running: exit 1, one line naming the address, the child stopped', async () => {
    const dir = tempDir()
    writeFileSync(join(dir, 'mcp.json'), JSON.stringify({ mcpServers: { everything: { command: process.execPath, args: [EVERYTHING, 'stdio'] } } }))
    const port = await takenPort()
    const ended = await run(['serve', '--upstreams', 'mcp.json'], { PORT: String(port) }, dir)
    expect(ended.code).toBe(1)
    expect(ended.stderr.trim().split('\n')).toEqual([`toolgate: cannot listen on 127.0.0.1:${port}: the address is already in use (EADDRINUSE)`])
    const pids = childPids(ended.stdout)
    expect(pids).toHaveLength(1)
    expect(pids.filter(isRunning)).toEqual([])
  })

  it('a required upstream that cannot be reached: exit 1 naming it', async () => {
    const dir = tempDir()
    writeFileSync(join(dir, 'mcp.json'), JSON.stringify({ mcpServers: { needed: { command: join(dir, 'no-such-command'), required: true } } }))
    const ended = await run(['serve', '--upstreams', 'mcp.json'], { PORT: String(await takenPort()) }, dir)
    expect(ended.code).toBe(1)
    expect(ended.stderr.trim().split('\n')).toEqual([expect.stringMatching(/^toolgate: upstream "needed" is required and could not be reached at start-up/)])
  })

  it('an audit log that cannot be opened, with Redis already connected: exit 1 naming the setting, Redis closed (no wait for the fallback exit)', async () => {
    const dir = tempDir()
    mkdirSync(join(dir, 'tools'))
    const started = performance.now()
    const ended = await run(['serve', 'tools'], {
      PORT: '0', AUDIT_LOG: join(dir, 'no-such-dir', 'audit.jsonl'), REDIS_URL: process.env.REDIS_URL ?? 'redis://127.0.0.1:6379',
    }, dir)
    expect(ended.code).toBe(1)
    expect(ended.stderr.trim().split('\n')).toEqual([expect.stringMatching(/^toolgate: invalid setting "AUDIT_LOG": .*no-such-dir/)])
    // A handle left open would hold the process until the 5 s fallback exit.
    expect(performance.now() - started).toBeLessThan(4_000)
  })
})
