import { z } from 'zod'
import type { MetricTotals } from '../metrics/totals.js'

/** What a call's outcome means for the charts: the outcomes that are not a failure. */
const NOT_FAILED = new Set(['ok', 'dry_run', 'replayed', 'approval_pending'])
/** The tools drawn in the latency chart, the busiest of each interval. */
const TOOLS_PER_POINT = 8

/** One interval of the console's charts, read off the gateway's own metrics. */
export const ChartPointSchema = z.object({
  at: z.string().describe('The interval\'s end (ISO 8601)'),
  seconds: z.number().describe('Its length'),
  byOutcome: z.record(z.string(), z.number()).describe('Calls that finished in it, by outcome'),
  byEffect: z.record(z.string(), z.number()).describe('The same by declared effect (a call counts once under each of its effects; `none` when it declares none)'),
  errors: z.number().describe('Calls that failed (every outcome but ok, dry_run, replayed, approval_pending)'),
  queueWaitP99Ms: z.number().nullable().describe('The 99th percentile of the waits for a slot, from the histogram\'s buckets; null without waits'),
  inFlight: z.number().describe('Calls under way at its end'),
  tools: z.array(z.object({
    tool: z.string(), calls: z.number(), p50Ms: z.number().nullable(), p99Ms: z.number().nullable(),
  })).describe(`The ${TOOLS_PER_POINT} busiest tools of the interval, with their latency percentiles from the duration histogram's buckets`),
}).meta({ id: 'ChartPoint' })
export type ChartPoint = z.output<typeof ChartPointSchema>

export interface MetricsHistoryOptions {
  readonly intervalMs: number
  /** How many intervals are kept (the charts' span is `points * intervalMs`). */
  readonly points: number
}

/**
 * The last minutes of the gateway's metrics, for the console's charts: every interval it reads
 * the counters (`GatewayMetrics.totals`) and keeps what changed since the last read, as
 * Prometheus's `increase()` and `histogram_quantile()` would compute it. Memory is bounded by
 * `points` whatever the traffic; the read is proportional to the series, not to the calls.
 */
export class MetricsHistory {
  readonly #read: () => MetricTotals
  readonly #points: ChartPoint[] = []
  #last: MetricTotals | undefined
  #lastAt = 0
  #timer: NodeJS.Timeout | undefined
  /** Bumped at every new point: the console's conditional reads compare it. */
  version = 0

  constructor (read: () => MetricTotals, readonly options: MetricsHistoryOptions) {
    this.#read = read
  }

  start (now = Date.now): void {
    this.sample(now())
    this.#timer = setInterval(() => { this.sample(now()) }, this.options.intervalMs)
    this.#timer.unref()
  }

  stop (): void {
    clearInterval(this.#timer)
  }

  /** The points kept, oldest first. */
  points (): readonly ChartPoint[] {
    return this.#points
  }

  /** Read the counters now; from the second read on, keep the interval since the previous one. */
  sample (at: number): void {
    const totals = this.#read()
    const last = this.#last
    const seconds = (at - this.#lastAt) / 1000
    this.#last = totals
    this.#lastAt = at
    if (last === undefined || seconds <= 0) return
    this.#points.push(pointOf(last, totals, at, seconds))
    if (this.#points.length > this.options.points) this.#points.shift()
    this.version++
  }
}

function pointOf (before: MetricTotals, now: MetricTotals, at: number, seconds: number): ChartPoint {
  const byOutcome: Record<string, number> = {}
  const byEffect: Record<string, number> = {}
  let errors = 0
  const tools: ChartPoint['tools'] = []
  for (const [tool, totals] of now.tools) {
    const earlier = before.tools.get(tool)
    let calls = 0
    for (const [outcome, count] of totals.byOutcome) {
      const delta = count - (earlier?.byOutcome.get(outcome) ?? 0)
      if (delta <= 0) continue
      calls += delta
      byOutcome[outcome] = (byOutcome[outcome] ?? 0) + delta
      if (!NOT_FAILED.has(outcome)) errors += delta
    }
    if (calls === 0) continue
    for (const effect of totals.effects.length === 0 ? ['none'] : totals.effects) byEffect[effect] = (byEffect[effect] ?? 0) + calls
    const durations = difference(totals.durations, earlier?.durations)
    tools.push({ tool, calls, p50Ms: millis(quantile(0.5, durations, now.durationBounds)), p99Ms: millis(quantile(0.99, durations, now.durationBounds)) })
  }
  tools.sort((a, b) => b.calls - a.calls || a.tool.localeCompare(b.tool))
  return {
    at: new Date(at).toISOString(),
    seconds,
    byOutcome,
    byEffect,
    errors,
    queueWaitP99Ms: millis(quantile(0.99, difference(now.queueWait, before.queueWait), now.queueWaitBounds)),
    inFlight: now.inFlight,
    tools: tools.slice(0, TOOLS_PER_POINT),
  }
}

function difference (now: Float64Array, before: Float64Array | undefined): Float64Array {
  if (before === undefined) return now
  const out = new Float64Array(now.length)
  for (let i = 0; i < now.length; i++) out[i] = Math.max(0, now[i]! - (before[i] ?? 0))
  return out
}

/**
 * The q-quantile of per-bucket counts, as Prometheus's `histogram_quantile` finds it: linear
 * within the bucket that holds the rank (from 0 for the first); past the last finite bound,
 * that bound. Undefined when nothing was counted.
 * @internal exported for its tests, not for the package
 */
export function quantile (q: number, counts: Float64Array, bounds: readonly number[]): number | undefined {
  let total = 0
  for (const count of counts) total += count
  if (total === 0) return undefined
  const rank = q * total
  let cumulative = 0
  for (let i = 0; i < counts.length; i++) {
    const count = counts[i]!
    if (cumulative + count >= rank && count > 0) {
      if (i >= bounds.length) return bounds[bounds.length - 1]
      const lower = i === 0 ? 0 : bounds[i - 1]!
      return lower + (bounds[i]! - lower) * ((rank - cumulative) / count)
    }
    cumulative += count
  }
  return bounds[bounds.length - 1]
}

function millis (seconds: number | undefined): number | null {
  return seconds === undefined ? null : Math.round(seconds * 1_000_000) / 1000
}
