import type { ApprovalEvent } from '../../core/approvals/approvals.js'
import type { AnyTool } from '../../core/tool.js'
import { CounterFamily, GaugeFamily, type CounterChild } from './families.js'

const DECISIONS = ['approved', 'rejected', 'expired'] as const

interface Series {
  readonly requested: CounterChild
  readonly decided: ReadonlyMap<string, CounterChild>
}

/**
 * `toolgate_approvals_requested_total` and `toolgate_approvals_decided_total` by tool, kind,
 * effects (and decision), and `toolgate_approvals_pending`. Series exist for catalog tools
 * only, every one from the start at 0, so labels stay a closed set.
 */
export class ApprovalMetrics {
  readonly families: ReadonlyArray<CounterFamily | GaugeFamily>
  readonly #tools = new Map<string, Series>()
  readonly #requested: CounterFamily
  readonly #decided: CounterFamily
  /** Pending approvals as last counted (the store may be remote, a scrape must not wait on it). */
  pending = 0

  constructor (tools: readonly AnyTool[]) {
    const requested = new CounterFamily('toolgate_approvals_requested_total', 'Calls that asked a person for approval, by tool')
    const decided = new CounterFamily('toolgate_approvals_decided_total', 'Approvals settled, by tool and decision (approved, rejected, expired)')
    const pending = new GaugeFamily('toolgate_approvals_pending', 'Approvals waiting for a decision now', () => this.pending)
    pending.child({})
    this.families = [requested, decided, pending]
    this.#requested = requested
    this.#decided = decided
    this.track(tools)
  }

  /** Series for the tools of a (new) catalog; an id keeps counting under its current labels. */
  track (tools: readonly AnyTool[]): void {
    for (const tool of tools) {
      const labels = { tool: tool.id, kind: tool.kind, effects: tool.effectsLabel }
      // Families keep one child per label set, so a tool that did not change gets its own back.
      this.#tools.set(tool.id, {
        requested: this.#requested.child(labels),
        decided: new Map(DECISIONS.map(decision => [decision, this.#decided.child({ ...labels, decision })] as const)),
      })
    }
  }

  observe (event: ApprovalEvent): void {
    const series = this.#tools.get(event.record.tool)
    if (series === undefined) return
    if (event.type === 'requested') series.requested.inc()
    else if (event.type === 'decided' || event.type === 'expired') series.decided.get(event.type === 'expired' ? 'expired' : event.record.status)?.inc()
  }
}
