/**
 * What fronting an MCP server costs: server-everything's `echo` over stdio, called
 *  - directly by the MCP SDK client (the reference),
 *  - through the cheapest HTTP front there can be (bench/targets/upstream-bare.ts: node:http and
 *    JSON-RPC lines by hand, nothing checked): the floor for any gateway on this machine,
 *  - through toolgate over REST (`POST /tools/everything_echo`, the gateway in its own process),
 *  - a local tool of that gateway that answers the same (`POST /tools/echo`): the gateway's floor,
 *  - through toolgate's own `POST /mcp` (a stateless `tools/call`),
 * with the same number of calls in flight, in interleaved rounds, from this one process.
 *
 *   npx tsx bench/upstream-mcp.ts [--rounds 3] [--seconds 5] [--concurrency 8] [--only bare,rest,local,mcp] [--profile DIR]
 *
 * Each row also says what one call cost every process in CPU (this one, the gateway, the MCP
 * server), from /proc: on a machine of two cores, three busy processes (load, gateway, server)
 * share what two (load, server) have on the direct path, and those figures give the ceiling.
 * The HTTP load is a bare keep-alive client (bench/lib/raw-http.ts): node:http cost this process
 * twice the whole direct call, and the MCP SDK's HTTP client (fetch) twenty times, which would
 * measure the load generator instead of the gateway.
 * `--profile DIR` starts the gateway with `--cpu-prof` (the profile is written at its exit).
 *
 * Every path ends in the same kind of server process, so the ratio is what the gateway adds:
 * a hop over loopback HTTP, the pipeline (validation, scheduling, timeout, parseOutput,
 * metrics) and the stdio hop it shares with the direct client.
 */
import { spawn } from 'node:child_process'
import { once } from 'node:events'
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs'
import { createRequire } from 'node:module'
import { tmpdir } from 'node:os'
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { Client } from '@modelcontextprotocol/sdk/client/index.js'
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js'
import { freePort } from '../scripts/lib/free-port.js'
import { flag, numberFlag } from './lib/args.js'
import { processCpuSeconds } from './lib/cpu.js'
import { RawHttpClient } from './lib/raw-http.js'

const rounds = numberFlag('rounds', 3)
const seconds = numberFlag('seconds', 5)
const concurrency = numberFlag('concurrency', 8)
const only = flag('only')?.split(',')
const profile = flag('profile')

const require = createRequire(import.meta.url)
const manifest = require.resolve('@modelcontextprotocol/server-everything/package.json')
const everything = join(dirname(manifest), 'dist/index.js')
// --gateway PATH: another build's entry, to compare two builds on the same machine in turn.
const bin = flag('gateway') ?? fileURLToPath(new URL('../dist/bin/toolgate.js', import.meta.url))

interface Path {
  readonly id: string
  readonly short: string
  /** The processes besides this one that serve the path: their CPU is counted per call. */
  readonly pids: () => Record<string, number | undefined>
  call (i: number): Promise<void>
}

const body = JSON.stringify({ message: 'hello' })
// The reference: the SDK client on its own stdio child.
const direct = new Client({ name: 'bench', version: '1.0.0' })
const directTransport = new StdioClientTransport({ command: process.execPath, args: [everything, 'stdio'], stderr: 'ignore' })
await direct.connect(directTransport)

// The gateway, in its own process, fronting its own server-everything child.
const dir = mkdtempSync(join(tmpdir(), 'toolgate-bench-upstream-'))
writeFileSync(join(dir, 'mcp.json'), JSON.stringify({ mcpServers: { everything: { command: process.execPath, args: [everything, 'stdio'], maxInFlight: 64 } } }))
const port = await freePort()
const gateway = spawn(process.execPath, ['--max-semi-space-size=' + String(numberFlag('semi-space', 4)), ...(profile === undefined ? [] : ['--cpu-prof', '--cpu-prof-dir', profile]), bin, 'serve', '--upstreams', 'mcp.json'], {
  cwd: dir, env: { PATH: process.env.PATH, HOME: process.env.HOME, PORT: String(port), TOOLS_DIR: fileURLToPath(new URL('targets/upstream-local', import.meta.url)), LOG_LEVEL: 'warn', MAX_QUEUE_PER_SESSION: '1000' }, stdio: ['ignore', 'ignore', 'inherit'],
})
// A bench that fails half-way (a call that throws, a gateway that does not start) still stops it.
process.once('exit', () => { gateway.kill('SIGTERM') })
const base = `http://127.0.0.1:${port}`
for (let tries = 0; ; tries++) {
  try {
    if ((await fetch(`${base}/readyz`)).ok) break
  } catch { /* not yet */ }
  if (tries > 600) throw new Error('the gateway did not start')
  await new Promise(resolve => setTimeout(resolve, 50))
}
/** The first child of a process: the server-everything a front runs. */
const childOf = (pid: number | undefined): number | undefined => {
  try {
    const [first] = readFileSync(`/proc/${pid}/task/${pid}/children`, 'utf8').trim().split(' ')
    return first === undefined || first === '' ? undefined : Number(first)
  } catch {
    return undefined
  }
}
const viaGateway = (): Record<string, number | undefined> => ({ gateway: gateway.pid, server: childOf(gateway.pid) })
// The floor: the cheapest HTTP front there can be, on its own server-everything child.
const bare = spawn(process.execPath, ['--import', './runtime/register.mjs', fileURLToPath(new URL('targets/upstream-bare.ts', import.meta.url)), everything], { stdio: ['pipe', 'pipe', 'inherit'] })
const [barePortLine] = await once(bare.stdout!, 'data') as [Buffer]
const barePort = Number(barePortLine.toString().trim())
const bareClients = await Promise.all(Array.from({ length: concurrency }, async () => await RawHttpClient.open(barePort, '/', body, {})))

// One connection per worker, and one session: echo is not read-only without an operator's word,
// so calls of one session run one at a time.
const rest = await Promise.all(Array.from({ length: concurrency }, async (_, i) => await RawHttpClient.open(port, '/tools/everything_echo', body, { 'x-session-id': `w${i}` })))
// A stateless `tools/call` on the gateway's own MCP endpoint, checked once with fetch: the raw
// client reads only the status, and a JSON-RPC error would answer 200 too.
const mcpBody = JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'everything_echo', arguments: { message: 'hello' } } })
const mcpHeaders = { accept: 'application/json, text/event-stream', 'mcp-protocol-version': '2025-11-25' }
const checked = await (await fetch(`${base}/mcp`, { method: 'POST', headers: { ...mcpHeaders, 'content-type': 'application/json' }, body: mcpBody })).text()
if (!checked.includes('Echo: hello')) throw new Error(`tools/call on /mcp answered ${checked}`)
const viaMcp = await Promise.all(Array.from({ length: concurrency }, async (_, i) => await RawHttpClient.open(port, '/mcp', mcpBody, { ...mcpHeaders, 'x-session-id': `w${i}` })))
const local = await Promise.all(Array.from({ length: concurrency }, async (_, i) => await RawHttpClient.open(port, '/tools/echo', body, { 'x-session-id': `w${i}` })))
/** One call on worker `i`'s own connection, which must answer 200. */
const okFrom = (clients: readonly RawHttpClient[]) => async (i: number): Promise<void> => {
  const status = await clients[i]!.call()
  if (status !== 200) throw new Error(`status ${status}`)
}
const allPaths: Path[] = [
  { id: 'sdk client -> stdio', short: 'direct', pids: () => ({ server: directTransport.pid ?? undefined }), call: async () => { await direct.callTool({ name: 'echo', arguments: { message: 'hello' } }) } },
  {
    id: 'bare node:http -> stdio',
    short: 'bare',
    pids: () => ({ gateway: bare.pid, server: childOf(bare.pid) }),
    call: okFrom(bareClients),
  },
  {
    id: 'toolgate REST -> stdio',
    short: 'rest',
    pids: viaGateway,
    call: okFrom(rest),
  },
  {
    id: 'toolgate REST, local',
    short: 'local',
    pids: () => ({ gateway: gateway.pid }),
    call: okFrom(local),
  },
  {
    id: 'toolgate /mcp -> stdio',
    short: 'mcp',
    pids: viaGateway,
    call: okFrom(viaMcp),
  },
]

// The direct path is the reference: always measured.
const paths = allPaths.filter(path => path.short === 'direct' || only === undefined || only.includes(path.short))

/** CPU microseconds per call of each process: this one (`load`) and the path's others. */
type Costs = Record<string, number>
interface Sample { readonly calls: number, readonly ms: number, readonly latencies: number[], readonly cpu: Costs }

function cpuNow (path: Path): Record<string, number> {
  const usage = process.cpuUsage()
  const out: Record<string, number> = { load: (usage.user + usage.system) / 1e6 }
  for (const [name, pid] of Object.entries(path.pids())) {
    const seconds = pid === undefined ? undefined : processCpuSeconds(pid)
    if (seconds !== undefined) out[name] = seconds
  }
  return out
}

async function measure (path: Path, durationMs: number): Promise<Sample> {
  const latencies: number[] = []
  const before = cpuNow(path)
  const started = performance.now()
  const until = started + durationMs
  await Promise.all(Array.from({ length: concurrency }, async (_, i) => {
    while (performance.now() < until) {
      const t = performance.now()
      await path.call(i)
      latencies.push(performance.now() - t)
    }
  }))
  const after = cpuNow(path)
  const cpu: Costs = {}
  for (const name of Object.keys(after)) if (before[name] !== undefined) cpu[name] = (after[name]! - before[name]!) * 1e6 / latencies.length
  return { calls: latencies.length, ms: performance.now() - started, latencies, cpu }
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
  const cpu: Costs = {}
  for (const name of Object.keys(samples[0]!.cpu)) {
    const each = samples.map(s => s.cpu[name] ?? 0).sort((a, b) => a - b)
    cpu[name] = each[Math.floor(each.length / 2)]!
  }
  return { id: path.id, rps: perRound[Math.floor(perRound.length / 2)]!, p50: quantile(all, 0.5), p99: quantile(all, 0.99), cpu }
})
const reference = summary[0]!
process.stdout.write(`server-everything echo over stdio, ${concurrency} calls in flight, ${rounds} rounds of ${seconds} s (median round)\n`)
for (const row of summary) {
  const cpu = Object.entries(row.cpu).map(([name, us]) => `${name} ${Math.round(us)}`).join(' ')
  process.stdout.write(`${row.id.padEnd(24)} ${Math.round(row.rps).toString().padStart(6)} calls/s  ${(row.rps / reference.rps).toFixed(2)}x  p50 ${row.p50.toFixed(2)} ms (+${(row.p50 - reference.p50).toFixed(2)})  p99 ${row.p99.toFixed(2)} ms  CPU us/call: ${cpu}\n`)
}

for (const client of [...bareClients, ...rest, ...local, ...viaMcp]) client.close()
await direct.close()
bare.kill('SIGTERM')
gateway.kill('SIGTERM')
await once(gateway, 'exit')
