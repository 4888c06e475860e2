import type { AuthFailureReason } from '../auth/challenge.js'
import type { CallRecord } from '../../core/call-record.js'
import { OUTCOMES, type Outcome } from '../../core/outcome.js'
import type { AnyTool } from '../../core/tool.js'
import { CounterFamily, GaugeFamily, HistogramFamily, type CounterChild, type GaugeChild, type HistogramChild } from './families.js'
import { processRegistry } from './process-metrics.js'
import { totalsOf, type MetricTotals } from './totals.js'

/**
 * From a few milliseconds to the two-minute default timeout.
 * @internal exported for its tests, not for the package
 */
export const DURATION_BUCKETS = [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120]
/** From no wait at all to past the default 30-second queue timeout. */
const QUEUE_WAIT_BUCKETS = [0.001, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60]

// A Record, so that a new AuthFailureReason fails to compile until it has its label here.
const KNOWN_AUTH_REASONS: Record<AuthFailureReason, true> = { missing: true, invalid_key: true, invalid_token: true, expired: true, malformed: true }
/**
 * The closed set of `reason` labels of `toolgate_auth_failures_total`; anything else is `other`.
 * @internal exported for its tests, not for the package
 */
export const AUTH_FAILURE_REASONS: readonly string[] = [...Object.keys(KNOWN_AUTH_REASONS), 'other']

export interface GatewayMetricsOptions {
  /** Calls waiting for a slot right now, read at every scrape. */
  readonly queued?: () => number
  /** Served as `toolgate_build_info{version}`. */
  readonly version?: string
  /** The audit trail is on: serve `toolgate_audit_dropped_total`. */
  readonly audit?: boolean
}

/** A family another service serves on `/metrics`: Prometheus text, or OpenMetrics with `openMetrics`. */
interface MoreFamily {
  render (out: string[], openMetrics?: boolean): void
}

/** What a route holds for one tool: `inc` when its call starts, `dec` when it settles. */
export interface InFlight {
  inc (): void
  dec (): void
}

interface ToolSeries {
  readonly calls: ReadonlyMap<Outcome, CounterChild>
  readonly duration: Map<Outcome, HistogramChild>
  readonly labels: Readonly<Record<'tool' | 'kind' | 'effects', string>>
  readonly inFlight: GaugeChild
  readonly queueWait: HistogramChild
  readonly replays: CounterChild
}

const NOT_COUNTED: InFlight = { inc () {}, dec () {} }

/**
 * The gateway's Prometheus metrics, plus the process's. Every series is a child bound once, at
 * start-up (or, for a duration histogram of an outcome other than ok, at its first call), so
 * the hot path is two map lookups and a few additions (see `families.ts` for why not
 * prom-client's children). Only catalog tools have series, and every label value comes from a
 * closed set: unknown tools, principals, inputs and paths add none.
 */
export class GatewayMetrics {
  /** The exposition format `/metrics` serves. */
  readonly contentType = 'text/plain; version=0.0.4; charset=utf-8'
  readonly #families: ReadonlyArray<CounterFamily | GaugeFamily | HistogramFamily>
  readonly #duration: HistogramFamily
  readonly #calls: CounterFamily
  readonly #authFailures: ReadonlyMap<string, CounterChild>
  readonly #tools = new Map<string, ToolSeries>()
  /** Families other services register (approvals, upstreams, webhooks), rendered after the gateway's own. */
  readonly #more: MoreFamily[] = []
  readonly #refreshers: Array<() => Promise<void>> = []
  /**
   * Calls through another face than REST (MCP) or through a bundle, made at a tool's first such
   * call: per REST series (a replaced tool's go with it), per transport, per bundle: no key
   * string built per call.
   */
  readonly #byFace = new WeakMap<ToolSeries, Map<string, Map<string, ToolSeries>>>()
  readonly #auditDropped: CounterChild | undefined
  readonly #inFlight: GaugeFamily
  readonly #queueWait: HistogramFamily
  readonly #replays: CounterFamily
  readonly #reloads: ReadonlyMap<'ok' | 'failed', CounterChild>
  #catalogTools = 0

  constructor (tools: readonly AnyTool[], options: GatewayMetricsOptions = {}) {
    const calls = new CounterFamily('toolgate_tool_calls_total', 'Tool calls by tool, declared effects and outcome')
    this.#calls = calls
    this.#duration = new HistogramFamily('toolgate_tool_duration_seconds', 'Tool call duration in seconds, from the pipeline\'s start to its end', DURATION_BUCKETS)
    const inFlight = new GaugeFamily('toolgate_tool_calls_in_flight', 'Tool calls started and not yet settled (queued or executing)')
    const queueWait = new HistogramFamily('toolgate_tool_queue_wait_seconds', 'Time a call waited for a concurrency slot, for calls that got one', QUEUE_WAIT_BUCKETS)
    const replays = new CounterFamily('toolgate_idempotent_replays_total', 'Calls answered with the stored result of an earlier call with the same idempotency key')
    this.#inFlight = inFlight
    this.#queueWait = queueWait
    this.#replays = replays
    const authFailures = new CounterFamily('toolgate_auth_failures_total', 'Failed authentications by reason')
    const reloads = new CounterFamily('toolgate_catalog_replacements_total', 'Replacements of the served tools (reloads of the tools folder, SIGHUP, the embedding API) by outcome; a failed one left the serving tools as they were')
    this.#reloads = new Map((['ok', 'failed'] as const).map(outcome => [outcome, reloads.child({ outcome })] as const))
    const catalogTools = new GaugeFamily('toolgate_catalog_tools', 'Tools in the catalog serving now', () => this.#catalogTools)
    catalogTools.child({})
    const queueLength = new GaugeFamily('toolgate_queue_length', 'Calls waiting for a concurrency slot, over all sessions', () => options.queued?.() ?? 0)
    queueLength.child({})
    const families: Array<CounterFamily | GaugeFamily | HistogramFamily> = [calls, this.#duration, inFlight, queueWait, replays, authFailures, queueLength, reloads, catalogTools]
    if (options.version !== undefined) {
      const buildInfo = new GaugeFamily('toolgate_build_info', 'The running toolgate version (always 1)')
      buildInfo.child({ version: options.version }).set(1)
      families.push(buildInfo)
    }
    if (options.audit === true) {
      const auditDropped = new CounterFamily('toolgate_audit_dropped_total', 'Audit lines dropped because the write buffer was full or a write failed')
      this.#auditDropped = auditDropped.child({})
      families.push(auditDropped)
    }
    this.#families = families

    this.track(tools)
    this.#authFailures = new Map(AUTH_FAILURE_REASONS.map(reason => [reason, authFailures.child({ reason })]))
  }

  /**
   * Series for every tool of a (new) catalog: a tool that is new, or whose kind or effects
   * changed, gets its own; series of tools that left stay, at their last values. Series are
   * bounded by the tools (and label sets) that ever served, never by what callers send.
   */
  track (tools: readonly AnyTool[]): void {
    this.#catalogTools = tools.length
    this.trackUnlisted(tools)
  }

  /** Series for tools that run calls but are not in the catalog (an upstream server's resource reads and prompt gets). */
  trackUnlisted (tools: readonly AnyTool[]): void {
    for (const tool of tools) {
      const known = this.#tools.get(tool.id)?.labels
      if (known !== undefined && known.kind === tool.kind && known.effects === tool.effectsLabel) continue
      const labels = { tool: tool.id, kind: tool.kind, effects: tool.effectsLabel }
      // Every outcome's counter exists at 0, so increase() sees a tool's first failure; the
      // ok histogram too. Other outcomes' histograms appear at their first call (bounded).
      this.#tools.set(tool.id, {
        calls: new Map(OUTCOMES.map(outcome => [outcome, this.#calls.child({ ...labels, outcome })] as const)),
        duration: new Map([['ok', this.#duration.child({ ...labels, outcome: 'ok' })]]),
        labels,
        inFlight: this.#inFlight.child(labels),
        queueWait: this.#queueWait.child(labels),
        replays: this.#replays.child(labels),
      })
    }
  }

  /** Count one replacement of the served tools. */
  catalogReplaced (outcome: 'ok' | 'failed'): void {
    this.#reloads.get(outcome)!.inc()
  }

  /** Run `refresh` before each scrape: a gauge whose value lives elsewhere (Redis) is read then. */
  beforeScrape (refresh: () => Promise<void>): void {
    this.#refreshers.push(refresh)
  }

  async #refresh (): Promise<void> {
    // A source that cannot be read leaves its gauges at their last value: the scrape still answers.
    await Promise.all(this.#refreshers.map(async refresh => { await refresh().catch(() => {}) }))
  }

  /** The whole exposition: the gateway's series, then the process's (prom-client). */
  async render (): Promise<string> {
    await this.#refresh()
    const out: string[] = []
    for (const family of this.#families) family.render(out)
    for (const family of this.#more) family.render(out)
    return out.join('\n') + '\n' + await processRegistry().metrics()
  }

  /** Serve more families on the same endpoint, in both formats. */
  register (...families: MoreFamily[]): void {
    this.#more.push(...families)
  }

  /** The same in OpenMetrics 1.0, where the duration histogram shows its exemplars (trace ids). */
  async renderOpenMetrics (): Promise<string> {
    await this.#refresh()
    const out: string[] = []
    for (const family of this.#families) family.render(out, true)
    for (const family of this.#more) family.render(out, true)
    return out.join('\n') + '\n' + await processRegistry('openmetrics').metrics()
  }

  /** The counters as they stand, summed by tool: what the console draws its charts from. */
  totals (): MetricTotals {
    return totalsOf({ calls: this.#calls, duration: this.#duration, queueWait: this.#queueWait, inFlight: this.#inFlight })
  }

  /** Count one finished call (the catalog's `onRecord`); `trace`, when traced, becomes its duration's exemplar. */
  observe (record: CallRecord, trace?: { readonly traceId: string, readonly spanId: string }): void {
    let series = this.#tools.get(record.toolId)
    if (series === undefined) return
    if (record.transport !== undefined || record.bundle !== undefined) series = this.#faceSeries(series, record.transport, record.bundle)
    this.#count(series, record.outcome, record.durationMs / 1000, trace)
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

  /** Count audit lines that could not be written. */
  auditDropped (lines: number): void {
    this.#auditDropped?.inc(lines)
  }

  /** Count a failed authentication; a reason outside the closed set counts as `other`. */
  authFailure (reason: string): void {
    (this.#authFailures.get(reason) ?? this.#authFailures.get('other')!).inc()
  }

  /**
   * The same families with one or two more labels, `transport` for calls that did not come
   * through the REST route and `bundle` for calls through a bundle: REST series keep their
   * labels, so existing dashboards and alerts hold. The transport is named by the gateway's own
   * code (a closed set), a bundle by the operator's file, never by a caller.
   */
  #faceSeries (rest: ToolSeries, transport: string | undefined, bundle: string | undefined): ToolSeries {
    let ofTool = this.#byFace.get(rest)
    if (ofTool === undefined) {
      ofTool = new Map()
      this.#byFace.set(rest, ofTool)
    }
    let ofTransport = ofTool.get(transport ?? '')
    if (ofTransport === undefined) {
      ofTransport = new Map()
      ofTool.set(transport ?? '', ofTransport)
    }
    let series = ofTransport.get(bundle ?? '')
    if (series === undefined) {
      const labels = { ...rest.labels, ...(transport === undefined ? {} : { transport }), ...(bundle === undefined ? {} : { bundle }) }
      series = {
        calls: new Map(OUTCOMES.map(outcome => [outcome, this.#calls.child({ ...labels, outcome })] as const)),
        duration: new Map(),
        labels: labels as ToolSeries['labels'],
        inFlight: rest.inFlight,
        queueWait: rest.queueWait,
        replays: rest.replays,
      }
      ofTransport.set(bundle ?? '', series)
    }
    return series
  }

  #count (series: ToolSeries, outcome: Outcome, seconds: number, trace?: { readonly traceId: string, readonly spanId: string }): void {
    const calls = series.calls.get(outcome)
    if (calls === undefined) return // not an outcome: never a new label value
    calls.inc()
    let duration = series.duration.get(outcome)
    if (duration === undefined) {
      duration = this.#duration.child({ ...series.labels, outcome })
      series.duration.set(outcome, duration)
    }
    if (trace === undefined) duration.observe(seconds)
    else duration.observeWithExemplar(seconds, trace.traceId, trace.spanId)
  }
}
