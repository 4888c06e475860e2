/**
 * What turning on a production feature costs: each variant beside its reference (the same
 * gateway with the feature off), all measured as one group, so every ratio is of runs made in
 * the same rounds on the same minutes of the machine's life. The goals are issue 24's.
 */
import { createConnection } from 'node:net'
import { measureGroup, type Measurement } from './measure.js'
import type { Plan } from './plan.js'
import { median } from './stats.js'
import { FEATURE_TARGETS, redisTargets, type Target } from './targets.js'

export interface FeaturePair {
  readonly feature: string
  readonly variant: string
  readonly reference: string
  /** Least req/s ratio to the reference the goal allows (absent: measured, no goal). */
  readonly minRate?: number
  /** Most server CPU per request, as a ratio to the reference's. */
  readonly maxCpu?: number
}

export const FEATURE_PAIRS: readonly FeaturePair[] = [
  { feature: 'audit log (every call of a writing tool audited)', variant: 'write-audited', reference: 'write', minRate: 0.9, maxCpu: 1.1 },
  { feature: 'audit log with AUDIT_FSYNC=true', variant: 'write-audited-fsync', reference: 'write' },
  { feature: 'tracing, every call sampled (always_on)', variant: 'traced-always-on', reference: 'untraced', minRate: 0.8 },
  { feature: 'tracing, parentbased_traceidratio 0.1', variant: 'traced-ratio-0.1', reference: 'untraced', minRate: 0.95 },
  { feature: 'tracing at 0.1 with TRACE_ACTIVE_SPAN=true (the tool\'s span active)', variant: 'traced-ratio-0.1-active', reference: 'untraced' },
  { feature: 'tracing by hand on bare Fastify, every call (what the two spans and their export cost whoever makes them)', variant: 'by-hand-traced', reference: 'by-hand' },
  { feature: 'tracing by hand on bare Fastify, 0.1', variant: 'by-hand-traced-0.1', reference: 'by-hand' },
  { feature: 'MCP tools/call vs REST POST /tools/echo', variant: 'untraced-mcp', reference: 'untraced', minRate: 0.95 },
  { feature: 'MCP tools/call vs REST, both by hand on bare Fastify (what the protocol itself costs)', variant: 'by-hand-mcp', reference: 'by-hand' },
  { feature: 'Redis slots (REDIS_URL) for a read-only tool', variant: 'toolgate-redis', reference: 'toolgate-echo', minRate: 0.9 },
  { feature: 'nothing: the same gateway in a second process (how far apart two runs of one code read)', variant: 'untraced-again', reference: 'untraced' },
]

export interface FeatureRatio extends FeaturePair {
  readonly rate: number
  /** Each round's run against the reference's run of the same round: median and range. */
  readonly roundRates: readonly number[]
  readonly p99: number
  /** Server CPU time per request, of the variant and as a ratio to the reference's. */
  readonly cpuUs: number
  readonly cpu: number
  readonly met: boolean | undefined
}

export interface FeatureReport {
  readonly generatedAt: string
  readonly loadAverage: readonly [number, number]
  /** Why a pair is missing (no Redis), when one is. */
  readonly skipped: readonly string[]
  readonly measurements: readonly Measurement[]
  readonly ratios: readonly FeatureRatio[]
}

const cpuUsOf = (m: Measurement): number => m.cpu.server / m.requestsPerSec * 1e6

export async function runFeatures (plan: Plan, log: (line: string) => void, loadAverage: () => number): Promise<FeatureReport> {
  const before = loadAverage()
  const skipped: string[] = []
  const redis = redisTargets().filter(t => t.id === 'toolgate-echo' || t.id === 'toolgate-redis')
  const redisUrl = redis[1]!.env!.BENCH_REDIS_URL!
  const withRedis = await reachable(redisUrl)
  if (!withRedis) skipped.push(`Redis slots: no Redis at ${redisUrl} (set BENCH_REDIS_URL)`)
  const targets: Target[] = [...FEATURE_TARGETS, ...(withRedis ? redis : [])]
  log(`features: ${targets.map(t => t.id).join(', ')}`)
  const measurements = await measureGroup(targets, plan, log)
  const byId = new Map(measurements.map(m => [m.id, m]))
  const ratios: FeatureRatio[] = []
  for (const pair of FEATURE_PAIRS) {
    const variant = byId.get(pair.variant)
    const reference = byId.get(pair.reference)
    if (variant === undefined || reference === undefined) continue
    const rate = variant.requestsPerSec / reference.requestsPerSec
    const cpu = cpuUsOf(variant) / cpuUsOf(reference)
    const met = pair.minRate === undefined ? undefined : rate >= pair.minRate && (pair.maxCpu === undefined || cpu <= pair.maxCpu)
    ratios.push({
      ...pair, rate, cpu, met, cpuUs: cpuUsOf(variant), p99: variant.p99Ms / reference.p99Ms,
      roundRates: variant.runs.map((run, round) => run.requestsPerSec / reference.runs[round]!.requestsPerSec),
    })
  }
  return { generatedAt: new Date().toISOString(), loadAverage: [before, loadAverage()], skipped, measurements, ratios }
}

export function medianRoundRate (ratio: FeatureRatio): number {
  return median(ratio.roundRates)
}

/** Whether something listens at the URL's host and port (a second at most). */
async function reachable (url: string): Promise<boolean> {
  const { hostname, port } = new URL(url)
  return await new Promise(resolve => {
    const socket = createConnection({ host: hostname, port: Number(port || 6379) })
    const done = (ok: boolean): void => { socket.destroy(); resolve(ok) }
    socket.setTimeout(1_000, () => { done(false) })
    socket.once('connect', () => { done(true) })
    socket.once('error', () => { done(false) })
  })
}
