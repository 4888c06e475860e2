/**
 * What an open operators' console costs the gateway's throughput: the same REST load
 * (`POST /tools/<tool>` with `{}`, autocannon, 32 connections) with no console open (A) and with
 * one console viewer open (B), in rounds on one gateway, side by side. Goal: B at most 3 % below A.
 *
 * The gateway is the build (`node dist/bin/toolgate.js serve`, its own process group, on core 0),
 * keyed for one principal with `tools:read,tools:call,gateway:read` and an audit file, into which
 * 40 writing calls go first, so that the console's audit tail reads real lines. The load
 * generator is bench/lib/load-worker.ts, a fresh process per round on core 1, as in
 * `npm run bench`. The viewer is one long-lived process on core 1 too, beside the load generator
 * and never on the gateway's core (a browser runs on the operator's machine); opened afresh (no
 * ETag held) before each B round, closed after it, idle in between:
 *  - `--viewer emulator` (the default, bench/lib/console-viewer.ts): the page's requests at the
 *    page's pace, its timings read off its source: the long poll of `/console/calls` read again
 *    once an answer arrives, after the page's pause (CALLS_PACE_MS) when it brought calls, the
 *    conditional reads every 5, 10 and 15 s; nothing drawn, so an upper bound of what a page
 *    asks. `--think MS` pauses that long instead (`--think 0`: the long poll unpaced, as the page
 *    read before it was paced);
 *  - `--viewer browser` (bench/lib/console-browser.ts): the page itself in headless Chromium. On
 *    two cores Chromium takes the load generator's core, so B measures that; it tells how often
 *    the page really reads.
 *
 * Pairs of rounds in alternating order (AB, BA, AB, ...), so that a drift of the machine hits
 * both sides, after a warm-up pair not counted; each round first waits (up to `--patience` s)
 * for other processes to use under 0.2 cores. The figures: each side's median req/s, their ratio
 * and the cost in %, the median of the pairs' ratios, the gateway's CPU per tool call, what the
 * viewer asked per second; then, the load stopped, what each of the console's reads costs the
 * gateway alone, times how often the page makes it: the estimate that a few per cent side by
 * side (which this 2-core VM's swings drown) cannot give.
 *
 *   npm run build && npm run bench:console [-- --rounds 8 --seconds 6 --warmup 10 --connections 32 --tool gateway_status --viewer emulator --think MS --patience 30 --profile DIR]
 *
 * `--rounds N`: N rounds of each side. `--tool`: a shipped tool that takes `{}`; the default,
 * `gateway_status`, is the cheapest shipped one (`time_now` builds two `Intl.DateTimeFormat`s per
 * call, about four times its CPU), so the console's share is the largest. `--profile DIR`
 * starts the gateway with `--cpu-prof` (the profile is written at its exit).
 */
import { spawn, type ChildProcess } from 'node:child_process'
import { createHash } from 'node:crypto'
import { mkdtempSync, readFileSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { freePort } from '../scripts/lib/free-port.js'
import { flag, numberFlag } from './lib/args.js'
import type { ViewerReport } from './lib/console-viewer.js'
import { pagePace } from './lib/console-page.js'
import { onCore } from './lib/cores.js'
import { processCpuSeconds, waitForQuiet } from './lib/cpu.js'
import { runLoad, type LoadResult } from './lib/load.js'
import { describeMachine } from './lib/machine.js'
import { BUSY_CORES } from './lib/measure.js'
import { LOAD_CORE, nextMessage, PINNED, SERVER_CORE, spawnNode, stop } from './lib/processes.js'
import { median } from './lib/stats.js'

const rounds = numberFlag('rounds', 8)
const seconds = numberFlag('seconds', 6)
const warmup = numberFlag('warmup', 10)
const connections = numberFlag('connections', 32)
const patience = numberFlag('patience', 30)
// The viewer's pause after an answer that brought calls: the page's own (CALLS_PACE_MS), unless `--think` says otherwise.
const pace = pagePace()
const think = numberFlag('think', pace.callsPaceMs)
const tool = flag('tool') ?? 'gateway_status'
const profile = flag('profile')
const viewerKind = flag('viewer') ?? 'emulator'
if (viewerKind !== 'emulator' && viewerKind !== 'browser') throw new Error(`--viewer is emulator or browser, not ${viewerKind}`)
const GOAL = 0.03
/** Reads of each kind in the alone figures. */
const ALONE_READS = 1000

const KEY = 'console-bench-key-0123456789abcdef'
const bin = fileURLToPath(new URL('../dist/bin/toolgate.js', import.meta.url))
const root = fileURLToPath(new URL('..', import.meta.url))
const log = (line: string): void => { process.stdout.write(`${line}\n`) }

/** CPU seconds of a process and every live process under it (Chromium's, for the browser viewer). */
function treeCpuSeconds (pid: number): number {
  let children: number[] = []
  try {
    children = readFileSync(`/proc/${pid}/task/${pid}/children`, 'utf8').trim().split(' ').filter(Boolean).map(Number)
  } catch { /* gone, or no /proc */ }
  return (processCpuSeconds(pid) ?? 0) + children.reduce((sum, child) => sum + treeCpuSeconds(child), 0)
}

// ---- The gateway ------------------------------------------------------------------------------

const dir = mkdtempSync(join(tmpdir(), 'toolgate-bench-console-'))
const port = await freePort()
const base = `http://127.0.0.1:${port}`
const [command, argv] = onCore(SERVER_CORE, process.execPath, [...(profile === undefined ? [] : ['--cpu-prof', '--cpu-prof-dir', profile]), bin, 'serve'])
// Its own process group (taskset execs node: the PID is the gateway's), stopped by that PID however this process ends.
const gateway = spawn(command, argv, {
  cwd: root,
  detached: true,
  stdio: ['ignore', 'ignore', 'inherit'],
  env: {
    PATH: process.env.PATH ?? '',
    HOME: process.env.HOME ?? dir,
    PORT: String(port),
    HOST: '127.0.0.1',
    LOG_LEVEL: 'warn',
    API_KEYS: `ops:${createHash('sha256').update(KEY).digest('hex')}:tools:read,tools:call,gateway:read`,
    AUDIT_LOG: join(dir, 'audit.jsonl'),
  },
})
const gatewayPid = gateway.pid!
const gatewayExited = new Promise<void>(resolve => gateway.once('exit', () => { resolve() }))
const killGateway = (signal: NodeJS.Signals): void => { try { process.kill(-gatewayPid, signal) } catch { /* gone */ } }
process.once('exit', () => { killGateway('SIGKILL'); rmSync(dir, { recursive: true, force: true }) })

let viewer: ChildProcess | undefined
try {
  for (let tries = 0; ; tries++) {
    try { if ((await fetch(`${base}/readyz`)).ok) break } catch { /* not yet */ }
    if (gateway.exitCode !== null) throw new Error(`the gateway exited with code ${gateway.exitCode}`)
    if (tries > 600) throw new Error('the gateway was not ready within 30 s')
    await new Promise(resolve => setTimeout(resolve, 50))
  }
  const headers = { 'content-type': 'application/json', 'x-api-key': KEY }
  const first = await fetch(`${base}/tools/${tool}`, { method: 'POST', headers, body: '{}' })
  if (first.status !== 200) throw new Error(`POST /tools/${tool} answered ${first.status} ${await first.text()}`)
  // Writing calls are audited (reads are not): lines for the console's audit tail to read.
  for (let i = 0; i < 40; i++) {
    const write = await fetch(`${base}/tools/notes_write`, { method: 'POST', headers, body: JSON.stringify({ key: 'bench/console', text: `line ${i}`, overwrite: true }) })
    if (write.status !== 200) throw new Error(`POST /tools/notes_write answered ${write.status} ${await write.text()}`)
  }
  const audit = await (await fetch(`${base}/console/audit?max=20`, { headers })).json() as { lines?: unknown[] }
  if (audit.lines?.length !== 20) throw new Error(`the audit tail answered ${JSON.stringify(audit).slice(0, 300)}, not 20 lines`)

  // ---- The viewer -----------------------------------------------------------------------------

  const theViewer = spawnNode(LOAD_CORE, [viewerKind === 'browser' ? 'bench/lib/console-browser.ts' : 'bench/lib/console-viewer.ts'], { ipc: true })
  viewer = theViewer
  const openViewer = async (): Promise<void> => {
    theViewer.send({ type: 'open', port, key: KEY, think })
    const answer = await nextMessage(theViewer, m => { const t = (m as { type?: string }).type; return t === 'opened' || t === 'failed' ? m as { type: string, error?: string } : undefined }, 60_000)
    if (answer.type === 'failed') throw new Error(`the console viewer could not open: ${answer.error}`)
  }
  const closeViewer = async (from: number, to: number): Promise<ViewerReport> => {
    theViewer.send({ type: 'close', from, to })
    return await nextMessage(theViewer, m => (m as { type?: string }).type === 'closed' ? (m as { report: ViewerReport }).report : undefined)
  }

  // ---- Rounds ---------------------------------------------------------------------------------

  interface Round { readonly side: 'A' | 'B', readonly load: LoadResult, readonly viewer?: ViewerReport, readonly viewerCpu: number }
  const load = async (durationSec: number): Promise<LoadResult> => await runLoad({ url: `${base}/tools/${tool}`, headers, body: '{}', connections, durationSec, serverPid: gatewayPid, latencies: true })
  const ours = (): number => processCpuSeconds(gatewayPid)! + treeCpuSeconds(theViewer.pid!) + (process.cpuUsage().user + process.cpuUsage().system) / 1e6
  let busyRounds = 0
  const round = async (side: 'A' | 'B', durationSec: number): Promise<Round> => {
    if (!await waitForQuiet(BUSY_CORES, patience, ours)) busyRounds++
    if (side === 'B') await openViewer()
    const cpuBefore = treeCpuSeconds(theViewer.pid!)
    const started = Date.now()
    const result = await load(durationSec)
    const to = Date.now()
    // Over the whole wait, the load process's start included: the viewer ran all along.
    const viewerCpu = (treeCpuSeconds(theViewer.pid!) - cpuBefore) / ((to - started) / 1000)
    if (side === 'A') return { side, load: result, viewerCpu }
    return { side, load: result, viewer: await closeViewer(to - result.durationSec * 1000, to), viewerCpu }
  }
  const broken = (r: Round): string | undefined => {
    if (r.load.errors + r.load.non2xx > 0) return `${r.load.errors} errors, ${r.load.non2xx} non-2xx answers to the load`
    const failed = Object.values(r.viewer?.reads ?? {}).reduce((sum, c) => sum + c.failed, 0)
    if (failed > 0) return `${failed} console reads failed (${r.viewer?.firstFailure})`
    return undefined
  }
  const consolePerSec = (r: Round): number => Object.values(r.viewer!.reads).reduce((sum, c) => sum + c.requests, 0) / r.viewer!.seconds
  const cpuPerCall = (r: Round): number => r.load.cpu.server / r.load.requestsPerSec * 1e6
  const othersOf = (r: Round): number => Math.max(0, r.load.cpu.others - r.viewerCpu)

  const machine = describeMachine()
  log(`An open console: POST /tools/${tool}, ${connections} connections; ${rounds} rounds of ${seconds} s per side in pairs (AB, BA, ...) after a ${warmup} s warm-up pair; viewer: ${viewerKind}${viewerKind === 'emulator' ? `, ${think} ms after an answer with calls (the page's CALLS_PACE_MS: ${pace.callsPaceMs})` : ''}`)
  log(`${machine.cpu}, ${machine.cores} cores, ${machine.memoryGiB} GiB, Node ${machine.node}; gateway (node dist/bin/toolgate.js serve) on core ${SERVER_CORE}, load generator and viewer on core ${LOAD_CORE}${PINNED ? ' (taskset)' : ' (NOT pinned: no taskset)'}; ${new Date().toISOString()}`)
  if (warmup > 0) {
    await round('A', warmup)
    await round('B', warmup)
  }
  log('')
  log('round  side        req/s   p50 ms   p99 ms   gateway CPU/call   CPU: gateway / load / viewer / others   console req/s')
  const measured: Round[] = []
  for (let pair = 0; pair < rounds; pair++) {
    for (const side of pair % 2 === 0 ? ['A', 'B'] as const : ['B', 'A'] as const) {
      const r = await round(side, seconds)
      const wrong = broken(r)
      if (wrong !== undefined) throw new Error(`round ${measured.length + 1} (${side}): ${wrong}`)
      measured.push(r)
      const shares = [r.load.cpu.server, r.load.cpu.load, r.viewerCpu, othersOf(r)].map(s => `${Math.round(s * 100)}%`.padStart(4)).join(' / ')
      log(`${String(measured.length).padStart(5)}${othersOf(r) >= BUSY_CORES ? '*' : ' '} ${side === 'A' ? 'A no console' : 'B console   '}  ${Math.round(r.load.requestsPerSec).toString().padStart(6)}  ${r.load.p50Ms.toFixed(2).padStart(7)}  ${r.load.p99Ms.toFixed(2).padStart(7)}  ${cpuPerCall(r).toFixed(1).padStart(11)} µs     ${shares}   ${(r.viewer === undefined ? '-' : consolePerSec(r).toFixed(1)).padStart(13)}`)
    }
  }

  // ---- Figures --------------------------------------------------------------------------------

  // As `npm run bench` does, the figures are of the undisturbed pairs (other processes under 0.2 cores in both rounds), when any.
  const pairs = Array.from({ length: rounds }, (_, i) => measured.slice(2 * i, 2 * i + 2))
  const clean = pairs.filter(pair => pair.every(r => othersOf(r) < BUSY_CORES))
  const counted = clean.length > 0 ? clean : pairs
  const sideA = counted.map(pair => pair.find(r => r.side === 'A')!)
  const sideB = counted.map(pair => pair.find(r => r.side === 'B')!)
  log('')
  log(`${clean.length} of ${rounds} pairs undisturbed (other processes under ${BUSY_CORES} cores in both rounds; * marks a disturbed round): ${clean.length > 0 ? 'the figures are theirs' : 'the figures are of all pairs, on a busy machine'}`)
  const rps = (rs: readonly Round[]): number[] => rs.map(r => r.load.requestsPerSec)
  const medianA = median(rps(sideA))
  const medianB = median(rps(sideB))
  const ratio = medianB / medianA
  const pairRatios = sideB.map((b, i) => b.load.requestsPerSec / sideA[i]!.load.requestsPerSec).sort((x, y) => x - y)
  const cpuA = median(sideA.map(cpuPerCall))
  const cpuB = median(sideB.map(cpuPerCall))
  const percent = (x: number): string => `${(x * 100).toFixed(1)} %`
  const range = (values: number[]): string => `${Math.round(Math.min(...values))}-${Math.round(Math.max(...values))}`
  log(`A, no console:        median ${Math.round(medianA)} req/s (${range(rps(sideA))}), gateway CPU ${cpuA.toFixed(1)} µs per call`)
  log(`B, one console open:  median ${Math.round(medianB)} req/s (${range(rps(sideB))}), gateway CPU ${cpuB.toFixed(1)} µs per call`)
  // Pairs that disagree by more than the goal cannot settle it either way.
  const undecided = pairRatios.at(-1)! - pairRatios[0]! > 2 * GOAL
  log(`B/A: ${ratio.toFixed(3)}, a cost of ${percent(1 - ratio)} (goal: at most ${percent(GOAL)}: ${1 - ratio <= GOAL ? 'met' : 'NOT met'}${undecided ? ', though the pairs disagree by more than the goal' : ''}); pair by pair: median ${median(pairRatios).toFixed(3)} (${pairRatios[0]!.toFixed(3)}-${pairRatios.at(-1)!.toFixed(3)})`)
  log(`gateway CPU per call: ${(cpuB / cpuA).toFixed(3)}x B over A (median rounds)`)
  log(`load core: load generator + viewer ${Math.round(median(sideB.map(r => r.load.cpu.load + r.viewerCpu)) * 100)}% in B, load generator ${Math.round(median(sideA.map(r => r.load.cpu.load)) * 100)}% in A (median round); other processes ${Math.round(median(sideA.map(othersOf)) * 100)}% / ${Math.round(median(sideB.map(othersOf)) * 100)}% of a core (A / B)${busyRounds > 0 ? `; ${busyRounds} rounds began on a machine still busy after ${patience} s` : ''}`)

  const reads = new Map<string, { requests: number, ok: number, notModified: number, bytes: number }>()
  let viewerSeconds = 0
  let callsSeen = 0
  for (const r of sideB) {
    viewerSeconds += r.viewer!.seconds
    callsSeen += r.viewer!.callsSeen
    for (const [name, c] of Object.entries(r.viewer!.reads)) {
      const sum = reads.get(name) ?? { requests: 0, ok: 0, notModified: 0, bytes: 0 }
      reads.set(name, { requests: sum.requests + c.requests, ok: sum.ok + c.ok, notModified: sum.notModified + c.notModified, bytes: sum.bytes + c.bytes })
    }
  }
  const total = [...reads.values()].reduce((sum, c) => sum + c.requests, 0)
  const polls = reads.get('calls')?.requests ?? 0
  const callsB = sideB.reduce((sum, r) => sum + r.load.requestsPerSec * r.load.durationSec, 0)
  log('')
  log(`the viewer, over the B rounds counted (${viewerSeconds.toFixed(0)} s under load): ${(total / viewerSeconds).toFixed(1)} console requests/s, ${(total / callsB * 100).toFixed(2)} per 100 tool calls; its CPU ${Math.round(median(sideB.map(r => r.viewerCpu)) * 100)}% of a core (median round)`)
  for (const [name, c] of [...reads].sort((x, y) => y[1].requests - x[1].requests)) {
    log(`  ${name.padEnd(15)} ${(c.requests / viewerSeconds).toFixed(2).padStart(8)}/s  ${String(c.requests).padStart(6)} requests  200: ${c.ok}  304: ${c.notModified}  ${(c.bytes / Math.max(1, c.requests) / 1024).toFixed(1)} KiB per answer`)
  }
  if (callsSeen >= 0) log(`  the long poll brought ${(callsSeen / Math.max(1, polls)).toFixed(1)} calls per answer: ${percent(callsSeen / callsB)} of the calls made (an answer holds the newest 100 at most)`)

  // ---- Alone: the gateway's CPU per console read, the load stopped ------------------------------
  // Side by side, a few per cent cannot be told from this machine's swings; what the console's
  // reads cost the gateway each, times how often the viewer made them, can (an estimate: amid load
  // a read also costs in garbage collection and caches, so the side-by-side cost of the unpaced
  // long poll came out about 1.5 times this one). Each read as the
  // viewer mostly had it answered: the calls with as many calls as its answers brought, the
  // charts' points (a new ETag every interval) and the audit tail in full, the rest as 304.
  const perAnswer = callsSeen > 0 && polls > 0 ? Math.min(100, Math.max(1, Math.round(callsSeen / polls))) : 100
  const newest = (await (await fetch(`${base}/console/calls?after=0&max=1&waitMs=0`, { headers })).json() as { next: number }).next
  // The long poll at the rate the viewer read it; the timed reads at the page's period (a round
  // may be shorter than the catalog's 15 s, and the first reads come before the load).
  const polled = polls / viewerSeconds
  const alone: Array<readonly [string, string, boolean, number]> = [
    ['calls', `/console/calls?after=${Math.max(0, newest - perAnswer)}&max=100&waitMs=0`, false, polled],
    ['series', '/console/series', false, 1000 / pace.pollMs],
    ['upstreams', '/console/upstreams', true, 1000 / pace.pollMs],
    ['approvals feed', '/approvals/ui/feed', true, 1000 / pace.pollMs],
    ['tools', '/console/tools', true, 1000 / (3 * pace.pollMs)],
    ['audit', '/console/audit?max=20', false, 1000 / (2 * pace.pollMs)],
  ]
  log('')
  log(`the gateway's CPU per console read, alone (the load stopped; ${ALONE_READS} reads each, one at a time), times how often one console makes it:`)
  let consoleCores = 0
  for (const [name, path, conditional, rate] of alone) {
    const etag = conditional ? (await fetch(base + path, { headers })).headers.get('etag') : null
    const readHeaders = etag === null ? headers : { ...headers, 'if-none-match': etag }
    const readOnce = async (): Promise<number> => { const answer = await fetch(base + path, { headers: readHeaders }); await answer.arrayBuffer(); return answer.status }
    const status = await readOnce()
    for (let i = 0; i < 100; i++) await readOnce()
    const before = processCpuSeconds(gatewayPid)!
    for (let i = 0; i < ALONE_READS; i++) await readOnce()
    const us = (processCpuSeconds(gatewayPid)! - before) / ALONE_READS * 1e6
    consoleCores += us * rate / 1e6
    log(`  ${name.padEnd(15)} ${us.toFixed(0).padStart(6)} µs (${status}${name === 'calls' ? `, ${perAnswer} calls` : ''}) x ${rate.toFixed(2).padStart(6)}/s = ${(us * rate / 1000).toFixed(2).padStart(7)} ms/s`)
  }
  // For scale: the load's own call, alone the same way (amid load the gateway takes many requests per wake-up).
  const callOnce = async (): Promise<void> => { await (await fetch(`${base}/tools/${tool}`, { method: 'POST', headers, body: '{}' })).arrayBuffer() }
  for (let i = 0; i < 100; i++) await callOnce()
  const callBefore = processCpuSeconds(gatewayPid)!
  for (let i = 0; i < ALONE_READS; i++) await callOnce()
  log(`  (for scale: POST /tools/${tool} alone ${((processCpuSeconds(gatewayPid)! - callBefore) / ALONE_READS * 1e6).toFixed(0)} µs, against ${cpuA.toFixed(1)} µs under load)`)
  const gatewayCores = median(sideA.map(r => r.load.cpu.server))
  log(`one open console: ${(consoleCores * 1000).toFixed(2)} ms of gateway CPU a second, ${percent(consoleCores / gatewayCores)} of what the gateway spent under A's load (${Math.round(gatewayCores * 100)}% of a core): an estimate of the throughput it costs where the gateway's CPU is the limit`)
} finally {
  if (viewer !== undefined) {
    // Let it close what it started (Chromium), then make sure.
    const exited = new Promise<void>(resolve => viewer!.once('exit', () => { resolve() }))
    if (viewer.connected) viewer.disconnect()
    if (viewer.exitCode === null && viewer.signalCode === null) await Promise.race([exited, new Promise(resolve => setTimeout(resolve, 5_000))])
    stop(viewer)
  }
  killGateway('SIGTERM')
  const stopped = await Promise.race([gatewayExited.then(() => true), new Promise<boolean>(resolve => setTimeout(() => { resolve(false) }, 5_000))])
  if (!stopped) killGateway('SIGKILL')
}
