/**
 * What fronting an MCP server costs: server-everything's `echo` over stdio, called
 *  - directly by the MCP SDK client (the reference),
 *  - through toolgate over REST (`POST /tools/everything_echo`, the gateway in its own process),
 *  - through toolgate's own `POST /mcp` by the MCP SDK client,
 * with the same number of calls in flight, in interleaved rounds, from this one process.
 *
 *   npx tsx bench/upstream-mcp.ts [--rounds 3] [--seconds 5] [--concurrency 8]
 *
 * Every path ends in the same kind of server process, so the ratio is what the gateway adds:
 * a hop over loopback HTTP, the pipeline (validation, scheduling, timeout, parseOutput,
 * metrics) and the stdio hop it shares with the direct client.
 */
import { spawn } from 'node:child_process'
import { once } from 'node:events'
import { Agent, request } from 'node:http'
import { mkdtempSync, writeFileSync } from 'node:fs'
import { createRequire } from 'node:module'
import { tmpdir } from 'node:os'
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { Client } from '@modelcontextprotocol/sdk/client/index.js'
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js'
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js'
import { freePort } from '../scripts/lib/free-port.js'

const args = process.argv.slice(2)
const option = (name: string, fallback: number): number => {
  const index = args.indexOf(`--${name}`)
  return index === -1 ? fallback : Number(args[index + 1])
}
const rounds = option('rounds', 3)
const seconds = option('seconds', 5)
const concurrency = option('concurrency', 8)

const require = createRequire(import.meta.url)
const manifest = require.resolve('@modelcontextprotocol/server-everything/package.json')
const everything = join(dirname(manifest), 'dist/index.js')
const bin = fileURLToPath(new URL('../dist/bin/toolgate.js', import.meta.url))

interface Path {
  readonly id: string
  call (i: number): Promise<void>
}

// The reference: the SDK client on its own stdio child.
const direct = new Client({ name: 'bench', version: '1.0.0' })
await direct.connect(new StdioClientTransport({ command: process.execPath, args: [everything, 'stdio'], stderr: 'ignore' }))

// The gateway, in its own process, fronting its own server-everything child.
const dir = mkdtempSync(join(tmpdir(), 'toolgate-bench-upstream-'))
writeFileSync(join(dir, 'mcp.json'), JSON.stringify({ mcpServers: { everything: { command: process.execPath, args: [everything, 'stdio'], maxInFlight: 64 } } }))
const port = await freePort()
const gateway = spawn(process.execPath, ['--max-semi-space-size=4', bin, 'serve', '--upstreams', 'mcp.json'], {
  cwd: dir, env: { PATH: process.env.PATH, HOME: process.env.HOME, PORT: String(port), LOG_LEVEL: 'warn', MAX_QUEUE_PER_SESSION: '1000' }, stdio: ['ignore', 'ignore', 'inherit'],
})
const base = `http://127.0.0.1:${port}`
for (let tries = 0; ; tries++) {
  try {
    if ((await fetch(`${base}/readyz`)).ok) break
  } catch { /* not yet */ }
  if (tries > 600) throw new Error('the gateway did not start')
  await new Promise(resolve => setTimeout(resolve, 50))
}
const viaMcp = new Client({ name: 'bench', version: '1.0.0' })
await viaMcp.connect(new StreamableHTTPClientTransport(new URL(`${base}/mcp`)))

const body = JSON.stringify({ message: 'hello' })
// node:http with keep-alive, not fetch: fetch costs this process more per request than the
// whole direct call, which would measure the load generator instead of the gateway.
const agent = new Agent({ keepAlive: true, maxSockets: concurrency })
function post (path: string, session: string): Promise<number> {
  return new Promise((resolve, reject) => {
    const req = request({ host: '127.0.0.1', port, path, method: 'POST', agent, headers: { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body), 'x-session-id': session } }, res => {
      res.resume()
      res.on('end', () => { resolve(res.statusCode ?? 0) })
    })
    req.on('error', reject)
    req.end(body)
  })
}
const paths: Path[] = [
  { id: 'sdk client -> stdio', call: async () => { await direct.callTool({ name: 'echo', arguments: { message: 'hello' } }) } },
  {
    id: 'toolgate REST -> stdio',
    call: async (i) => {
      // One session per worker: echo is not read-only without an operator's word, so calls of one session run one at a time.
      const status = await post(`/tools/everything_echo`, `w${i}`)
      if (status !== 200) throw new Error(`status ${status}`)
    },
  },
  { id: 'toolgate /mcp -> stdio', call: async () => { await viaMcp.callTool({ name: 'everything_echo', arguments: { message: 'hello' } }) } },
]

interface Sample { readonly calls: number, readonly ms: number, readonly latencies: number[] }

async function measure (path: Path, durationMs: number): Promise<Sample> {
  const latencies: number[] = []
  const started = performance.now()
  const until = started + durationMs
  await Promise.all(Array.from({ length: concurrency }, async (_, i) => {
    while (performance.now() < until) {
      const t = performance.now()
      await path.call(i)
      latencies.push(performance.now() - t)
    }
  }))
  return { calls: latencies.length, ms: performance.now() - started, latencies }
}

const quantile = (sorted: number[], q: number): number => sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))]!
const results = new Map<string, Sample[]>(paths.map(path => [path.id, []]))
for (const path of paths) await measure(path, 1_000) // warm-up
for (let round = 0; round < rounds; round++) {
  for (const path of paths) results.get(path.id)!.push(await measure(path, seconds * 1_000))
}

const summary = paths.map(path => {
  const samples = results.get(path.id)!
  const perRound = samples.map(s => s.calls / s.ms * 1_000).sort((a, b) => a - b)
  const all = samples.flatMap(s => s.latencies).sort((a, b) => a - b)
  return { id: path.id, rps: perRound[Math.floor(perRound.length / 2)]!, p50: quantile(all, 0.5), p99: quantile(all, 0.99) }
})
const reference = summary[0]!
process.stdout.write(`server-everything echo over stdio, ${concurrency} calls in flight, ${rounds} rounds of ${seconds} s (median round)\n`)
for (const row of summary) {
  process.stdout.write(`${row.id.padEnd(24)} ${Math.round(row.rps).toString().padStart(6)} calls/s  ${(row.rps / reference.rps).toFixed(2)}x  p50 ${row.p50.toFixed(2)} ms (+${(row.p50 - reference.p50).toFixed(2)})  p99 ${row.p99.toFixed(2)} ms\n`)
}

agent.destroy()
await direct.close()
await viaMcp.close()
gateway.kill('SIGTERM')
await once(gateway, 'exit')
