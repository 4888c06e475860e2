import { Counter, Gauge, Histogram, Registry, type LabelValues } from 'prom-client'
import type { AuthFailureReason } from './auth/challenge.js'
import { OUTCOMES, type CallRecord, type Outcome } from './call-record.js'
import { processRegistry } from './process-metrics.js'
import type { AnyTool } from './tool.js'

type ToolLabels = 'tool' | 'kind' | 'effects'
type CallLabels = ToolLabels | 'outcome'

/** From a few milliseconds to the two-minute default timeout. */
export const DURATION_BUCKETS = [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120]
/** From no wait at all to past the default 30-second queue timeout. */
export const QUEUE_WAIT_BUCKETS = [0.001, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60]

// A Record, so that a new AuthFailureReason fails to compile until it has its label here.
const KNOWN_AUTH_REASONS: Record<AuthFailureReason, true> = { missing: true, invalid_key: true, invalid_token: true, expired: true, malformed: true }
/** The closed set of `reason` labels of `toolgate_auth_failures_total`; anything else is `other`. */
export const AUTH_FAILURE_REASONS: readonly string[] = [...Object.keys(KNOWN_AUTH_REASONS), 'other']

export interface GatewayMetricsOptions {
  /** Calls waiting for a slot right now, read at every scrape. */
  readonly queued?: () => number
  /** Served as `toolgate_build_info{version}`. */
  readonly version?: string
}

/** What a route holds for one tool: `inc` when its call starts, `dec` when it settles. */
export interface InFlight {
  inc (): void
  dec (): void
}

interface ToolSeries {
  readonly calls: ReadonlyMap<Outcome, Counter.Internal>
  readonly duration: Map<Outcome, Histogram.Internal<CallLabels>>
  readonly labels: LabelValues<ToolLabels>
  readonly inFlight: InFlight
  readonly queueWait: Histogram.Internal<ToolLabels>
  readonly replays: Counter.Internal
}

const NOT_COUNTED: InFlight = { inc () {}, dec () {} }

/**
 * The gateway's Prometheus metrics, plus the process's. Every label child is bound once, at
 * start-up (or, for a duration histogram of an outcome other than ok, at its first call), so
 * the hot path is two map lookups and the increments. Only catalog tools have series, and every
 * label value comes from a closed set: unknown tools, principals, inputs and paths add none.
 */
export class GatewayMetrics {
  /** Everything `/metrics` serves: the gateway's series and the process's. */
  readonly registry: Registry
  readonly #duration: Histogram<CallLabels>
  readonly #authFailures: ReadonlyMap<string, Counter.Internal>
  readonly #tools = new Map<string, ToolSeries>()

  constructor (tools: readonly AnyTool[], options: GatewayMetricsOptions = {}) {
    const own = new Registry()
    const registers = [own]
    const calls = new Counter({ name: 'toolgate_tool_calls_total', help: 'Tool calls by tool, declared effects and outcome', labelNames: ['tool', 'kind', 'effects', 'outcome'], registers })
    this.#duration = new Histogram({ name: 'toolgate_tool_duration_seconds', help: 'Tool call duration in seconds, from the pipeline\'s start to its end', labelNames: ['tool', 'kind', 'effects', 'outcome'], buckets: DURATION_BUCKETS, registers })
    const inFlight = new Gauge({ name: 'toolgate_tool_calls_in_flight', help: 'Tool calls started and not yet settled (queued or executing)', labelNames: ['tool', 'kind', 'effects'], registers })
    const queueWait = new Histogram({ name: 'toolgate_tool_queue_wait_seconds', help: 'Time a call waited for a concurrency slot, for calls that got one', labelNames: ['tool', 'kind', 'effects'], buckets: QUEUE_WAIT_BUCKETS, registers })
    const replays = new Counter({ name: 'toolgate_idempotent_replays_total', help: 'Calls answered with the stored result of an earlier call with the same idempotency key', labelNames: ['tool', 'kind', 'effects'], registers })
    const authFailures = new Counter({ name: 'toolgate_auth_failures_total', help: 'Failed authentications by reason', labelNames: ['reason'], registers })
    new Gauge({ name: 'toolgate_queue_length', help: 'Calls waiting for a concurrency slot, over all sessions', registers, collect () { this.set(options.queued?.() ?? 0) } })
    if (options.version !== undefined) new Gauge({ name: 'toolgate_build_info', help: 'The running toolgate version (always 1)', labelNames: ['version'], registers }).set({ version: options.version }, 1)

    for (const tool of tools) {
      const labels: LabelValues<ToolLabels> = { tool: tool.id, kind: tool.kind, effects: tool.effectsLabel }
      // Every outcome's counter exists at 0, so increase() sees a tool's first failure; the
      // ok histogram too. Other outcomes' histograms appear at their first call (bounded).
      const byOutcome = new Map(OUTCOMES.map(outcome => [outcome, calls.labels({ ...labels, outcome })] as const))
      for (const counter of byOutcome.values()) counter.inc(0)
      this.#duration.zero({ ...labels, outcome: 'ok' })
      queueWait.zero(labels)
      inFlight.set(labels, 0)
      replays.inc(labels, 0)
      this.#tools.set(tool.id, {
        calls: byOutcome,
        duration: new Map([['ok', this.#duration.labels({ ...labels, outcome: 'ok' })]]),
        labels,
        inFlight: inFlight.labels(labels),
        queueWait: queueWait.labels(labels),
        replays: replays.labels(labels),
      })
    }
    this.#authFailures = new Map(AUTH_FAILURE_REASONS.map(reason => {
      authFailures.inc({ reason }, 0)
      return [reason, authFailures.labels({ reason })]
    }))
    this.registry = Registry.merge([own, processRegistry()])
  }

  /** Count one finished call (the catalog's `onRecord`). */
  observe (record: CallRecord): void {
    const series = this.#tools.get(record.toolId)
    if (series === undefined) return
    this.#count(series, record.outcome, record.durationMs / 1000)
    // queueMs is measured only once a slot was granted.
    if (record.executed) series.queueWait.observe(record.queueMs / 1000)
    if (record.outcome === 'replayed') series.replays.inc()
  }

  /** Count a call that ended before the core saw it (authentication, transport errors). */
  observeOutcome (toolId: string, outcome: Outcome, seconds: number): void {
    const series = this.#tools.get(toolId)
    if (series !== undefined) this.#count(series, outcome, seconds)
  }

  /** The in-flight gauge of one tool, bound once by its route; a no-op for an unknown tool. */
  inFlight (toolId: string): InFlight {
    return this.#tools.get(toolId)?.inFlight ?? NOT_COUNTED
  }

  /** Count a failed authentication; a reason outside the closed set counts as `other`. */
  authFailure (reason: string): void {
    (this.#authFailures.get(reason) ?? this.#authFailures.get('other')!).inc()
  }

  #count (series: ToolSeries, outcome: Outcome, seconds: number): void {
    const calls = series.calls.get(outcome)
    if (calls === undefined) return // not an outcome: never a new label value
    calls.inc()
    let duration = series.duration.get(outcome)
    if (duration === undefined) {
      duration = this.#duration.labels({ ...series.labels, outcome })
      series.duration.set(outcome, duration)
    }
    duration.observe(seconds)
  }
}
