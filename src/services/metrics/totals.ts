import type { CounterFamily, GaugeFamily, HistogramFamily } from './families.js'

/** One tool's counts, summed over every face (REST, MCP, bundles) it was called through. */
interface ToolTotals {
  /** Its declared effects, as its series name them (empty for none). */
  readonly effects: readonly string[]
  readonly byOutcome: Map<string, number>
  /** Its durations, per bucket (not cumulative), every outcome together. */
  readonly durations: Float64Array
}

/**
 * The gateway's own counters as they stand, for the console's charts: what a Prometheus server
 * would scrape, summed the way its first dashboard would (by tool, over faces and bundles).
 */
export interface MetricTotals {
  readonly tools: ReadonlyMap<string, ToolTotals>
  readonly durationBounds: readonly number[]
  readonly queueWaitBounds: readonly number[]
  /** Every call's wait for a slot, per bucket. */
  readonly queueWait: Float64Array
  readonly inFlight: number
}

export interface TotalFamilies {
  readonly calls: CounterFamily
  readonly duration: HistogramFamily
  readonly queueWait: HistogramFamily
  readonly inFlight: GaugeFamily
}

/** Read the families once; a reader's work, proportional to the series, never the calls. */
export function totalsOf ({ calls, duration, queueWait, inFlight }: TotalFamilies): MetricTotals {
  const tools = new Map<string, ToolTotals>()
  const of = (labels: Readonly<Record<string, string>>): ToolTotals => {
    const id = labels.tool ?? ''
    let totals = tools.get(id)
    if (totals === undefined) {
      const effects = labels.effects === undefined || labels.effects === 'none' ? [] : labels.effects.split(',')
      totals = { effects, byOutcome: new Map(), durations: new Float64Array(duration.bounds.length + 1) }
      tools.set(id, totals)
    }
    return totals
  }
  calls.each((labels, child) => {
    if (child.value === 0) return
    const totals = of(labels)
    const outcome = labels.outcome ?? 'unknown'
    totals.byOutcome.set(outcome, (totals.byOutcome.get(outcome) ?? 0) + child.value)
  })
  duration.each((labels, child) => {
    if (child.count === 0) return
    const into = of(labels).durations
    for (let i = 0; i < child.counts.length; i++) into[i]! += child.counts[i]!
  })
  const waits = new Float64Array(queueWait.bounds.length + 1)
  queueWait.each((_labels, child) => {
    for (let i = 0; i < child.counts.length; i++) waits[i]! += child.counts[i]!
  })
  let running = 0
  inFlight.each((_labels, child) => { running += child.value })
  return { tools, durationBounds: duration.bounds, queueWaitBounds: queueWait.bounds, queueWait: waits, inFlight: running }
}
