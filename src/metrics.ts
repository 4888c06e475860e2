import { Counter, Histogram, Registry, type LabelValues } from 'prom-client'
import type { CallRecord, Outcome } from './call-record.js'
import type { AnyTool } from './tool.js'

type CallLabels = 'tool' | 'kind' | 'effects' | 'outcome'

/** From a few milliseconds to the two-minute default timeout. */
export const DURATION_BUCKETS = [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120]

interface Children {
  readonly calls: Counter.Internal
  readonly duration: Histogram.Internal<CallLabels>
}

/**
 * The gateway's Prometheus metrics. Label children are bound once per (tool, outcome) and
 * reused, so the hot path is a map lookup and two increments. Only catalog tools have
 * series: unknown names never reach here.
 */
export class GatewayMetrics {
  readonly registry: Registry
  readonly #calls: Counter<CallLabels>
  readonly #duration: Histogram<CallLabels>
  readonly #authFailures: Counter<'reason'>
  readonly #tools = new Map<string, { readonly tool: AnyTool, readonly byOutcome: Map<Outcome, Children> }>()

  constructor (tools: readonly AnyTool[], registry = new Registry()) {
    this.registry = registry
    this.#calls = new Counter({ name: 'toolgate_tool_calls_total', help: 'Tool calls by tool, declared effects and outcome', labelNames: ['tool', 'kind', 'effects', 'outcome'], registers: [registry] })
    this.#duration = new Histogram({ name: 'toolgate_tool_duration_seconds', help: 'Tool call duration in seconds, from the pipeline\'s start to its end', labelNames: ['tool', 'kind', 'effects', 'outcome'], buckets: DURATION_BUCKETS, registers: [registry] })
    this.#authFailures = new Counter({ name: 'toolgate_auth_failures_total', help: 'Failed authentications by reason', labelNames: ['reason'], registers: [registry] })
    for (const tool of tools) {
      this.#tools.set(tool.id, { tool, byOutcome: new Map() })
      this.#children(tool.id, 'ok') // every known tool's ok series exists at 0 from start-up
    }
  }

  /** Count one finished call. */
  observe (record: CallRecord): void {
    this.observeOutcome(record.toolId, record.outcome, record.durationMs / 1000)
  }

  /** Count a call that ended before the core saw it (authentication, transport errors). */
  observeOutcome (toolId: string, outcome: Outcome, seconds: number): void {
    const children = this.#children(toolId, outcome)
    if (children === undefined) return
    children.calls.inc()
    children.duration.observe(seconds)
  }

  authFailure (reason: string): void {
    this.#authFailures.inc({ reason })
  }

  #children (toolId: string, outcome: Outcome): Children | undefined {
    const entry = this.#tools.get(toolId)
    if (entry === undefined) return undefined
    let children = entry.byOutcome.get(outcome)
    if (children === undefined) {
      const labels: LabelValues<CallLabels> = { tool: toolId, kind: entry.tool.kind, effects: entry.tool.effectsLabel, outcome }
      children = { calls: this.#calls.labels(labels), duration: this.#duration.labels(labels) }
      entry.byOutcome.set(outcome, children)
    }
    return children
  }
}
