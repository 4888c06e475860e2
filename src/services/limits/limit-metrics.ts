import type { CallRecord } from '../../core/call-record.js'
import type { ToolCatalog } from '../../core/catalog.js'
import { reportOf } from '../../core/limits/report.js'
import type { Limit } from '../../core/limits/limit.js'
import { CounterFamily, GaugeFamily } from '../metrics/families.js'

/*
 * What limits do, on `/metrics`: calls refused or asked of a person, by limit and the tool's
 * declared effects (bounded: limits are the operator's and the tools' own names), and what is
 * left of each global limit in its window, read from the store at each scrape so that every
 * replica reports the count they share.
 */

export class LimitMetrics {
  readonly families: readonly [CounterFamily, GaugeFamily]
  readonly #refusals = new CounterFamily('toolgate_limit_refusals_total', 'Calls a limit stopped, by limit, the tool\'s declared effects and action: refused (429 or 422) or asked (the call became an approval)')
  readonly #remaining = new GaugeFamily('toolgate_limit_remaining', 'What is left of a global limit now: calls for a rate or quota, the amount for a budget')

  constructor () {
    this.families = [this.#refusals, this.#remaining]
  }

  /** Count a call a limit stopped (the catalog's `onRecord`). */
  observe (record: CallRecord): void {
    if (record.limit === undefined || record.limitAction === undefined) return
    this.#refusals.child({ limit: record.limit, effects: record.effectsLabel, action: record.limitAction }).inc()
  }

  /** Read what is left of every global limit that covers a tool served now. */
  async refresh (catalog: ToolCatalog<unknown>): Promise<void> {
    const global = new Map<string, Limit>()
    for (const tool of catalog.tools) {
      for (const limit of catalog.limits.of(tool)) if (limit.per === 'global') global.set(limit.name, limit)
    }
    if (global.size === 0) return
    const uses = await catalog.limits.standing([...global.values()], { principal: '', session: '' })
    for (const use of uses) this.#remaining.child({ limit: use.limit.name, kind: use.limit.kind }).set(reportOf(use).remaining)
  }
}
