/**
 * Where a target's CPU goes under the bench's load: `npx tsx bench/profile.ts ID [ID...]` starts
 * each target (ids of bench/lib/targets.ts, the features' among them) under `node --cpu-prof`,
 * warms it up, loads it as the bench does, stops it and prints the functions with the most self
 * time, in microseconds per request (self time over every request the process answered), so
 * two targets compare directly; with two or more ids it also prints, for each later one, the
 * functions that cost it most beyond the first (its reference). Options: `--seconds N`
 * (default 10), `--top N` (default 25). Only the measured run's samples count (not start-up or warm-up). An id may also be a server file (`/other/tree/bench/targets/x.ts`),
 * sent the request of the id before it. Idle time is left out. The profiles stay in
 * bench/results/profiles/ (for a viewer). The profiler slows the server: compare, do not quote.
 */
import { mkdirSync, readdirSync, readFileSync, rmSync } from 'node:fs'
import { join } from 'node:path'
import { takeFlag } from './lib/args.js'
import { loadSpecFor, runLoad } from './lib/load.js'
import { startServer } from './lib/servers.js'
import { FEATURE_TARGETS, redisTargets, TARGETS, type Target } from './lib/targets.js'

interface ProfileNode { id: number, callFrame: { functionName: string, url: string, lineNumber: number }, children?: number[] }
interface Profile { nodes: ProfileNode[], startTime: number, endTime: number, samples: number[], timeDeltas: number[] }

const args = process.argv.slice(2)
const seconds = Number(takeFlag(args, 'seconds', '10'))
const top = Number(takeFlag(args, 'top', '25'))
const known = new Map([...TARGETS, ...FEATURE_TARGETS, ...redisTargets()].map(t => [t.id, t]))
const dir = 'bench/results/profiles'

const measured: Array<{ id: string, perRequest: Map<string, number> }> = []
for (const id of args) {
  // A server file (another tree's target, to profile before and after a change) gets the request of the id before it.
  const target = known.get(id) ?? (id.endsWith('.ts') && measured.length > 0 ? { ...known.get(measured.at(-1)!.id) ?? known.get('untraced')!, id, label: id, file: id } : undefined)
  if (target === undefined) throw new Error(`no target ${id}; known: ${[...known.keys()].join(', ')}, or a server file after one of them`)
  const { file, requests, window } = await profile(target)
  const perRequest = selfTimes(JSON.parse(readFileSync(file, 'utf8')) as Profile, requests, window)
  measured.push({ id, perRequest })
  const total = [...perRequest.values()].reduce((sum, us) => sum + us, 0)
  process.stdout.write(`\n${id}: ${total.toFixed(1)} us of CPU per request (${file})\n${lines(perRequest)}\n`)
}
const [reference, ...others] = measured
for (const other of others) {
  const beyond = new Map([...new Set([...other.perRequest.keys(), ...reference!.perRequest.keys()])]
    .map(key => [key, (other.perRequest.get(key) ?? 0) - (reference!.perRequest.get(key) ?? 0)]))
  process.stdout.write(`\n${other.id} beyond ${reference!.id}, us per request:\n${lines(beyond)}\n`)
}

function lines (usByFunction: ReadonlyMap<string, number>): string {
  return [...usByFunction].sort((a, b) => b[1] - a[1]).slice(0, top).map(([key, us]) => `${us.toFixed(2).padStart(7)}  ${key}`).join('\n')
}

function monotonicUs (): number {
  return Number(process.hrtime.bigint() / 1_000n)
}

async function profile (target: Target): Promise<{ file: string, requests: number, window: readonly [number, number] }> {
  const out = join(dir, target.id)
  rmSync(out, { recursive: true, force: true })
  mkdirSync(out, { recursive: true })
  const server = await startServer(target, ['--cpu-prof', `--cpu-prof-dir=${out}`])
  await runLoad(loadSpecFor(server, { connections: 50, durationSec: 3, latencies: false }))
  // Only the measured run counts: start-up (module loading), warm-up and shutdown (a traced target
  // exports what it holds) would swamp it. The profile's clock is the monotonic one, as is hrtime's.
  const from = monotonicUs()
  const result = await runLoad(loadSpecFor(server, { connections: 50, durationSec: seconds, latencies: false }))
  const to = monotonicUs()
  process.stderr.write(`${target.id}: ${Math.round(result.requestsPerSec)} req/s under the profiler\n`)
  const exited = new Promise(resolve => server.child.once('exit', resolve))
  server.child.kill('SIGTERM')
  await exited
  const requests = result.ok + result.non2xx
  // The target's own children (an OTLP sink) write profiles too: the target's is the largest.
  const files = readdirSync(out).map(name => join(out, name))
  return { file: files.sort((a, b) => readFileSync(b).length - readFileSync(a).length)[0]!, requests, window: [from, to] }
}

/** Self time by function (name, file, line) within `window` (monotonic microseconds), in microseconds per request; idle left out. */
function selfTimes (profile: Profile, requests: number, [from, to]: readonly [number, number]): Map<string, number> {
  const byNode = new Map(profile.nodes.map(node => [node.id, node]))
  const totals = new Map<string, number>()
  let at = profile.startTime
  profile.samples.forEach((nodeId, i) => {
    at += profile.timeDeltas[i] ?? 0
    if (at < from || at > to) return
    const { functionName, url, lineNumber } = byNode.get(nodeId)!.callFrame
    if (functionName === '(idle)') return
    const where = url === '' ? '' : ` ${url.replace(/^.*\/node_modules\//, '').replace(/^file:\/\/.*?\/(src|plugins|bench)\//, '$1/')}:${lineNumber + 1}`
    const key = `${functionName || '(anonymous)'}${where}`
    totals.set(key, (totals.get(key) ?? 0) + (profile.timeDeltas[i] ?? 0) / requests)
  })
  return totals
}
