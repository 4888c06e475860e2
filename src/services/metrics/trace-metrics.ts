import type { SpanCounts } from '../tracing/types.js'
import { CounterFamily } from './families.js'

const OUTCOMES = ['exported', 'dropped', 'failed'] as const

/**
 * `toolgate_trace_spans_total{outcome}`: what became of the sampled spans, read from the span
 * processor at each scrape. `dropped` grows when the processor's queue is full (the collector is
 * slower than the spans come, or down), `failed` when an export fails or times out: either says
 * traces are being lost, which the traces themselves cannot show.
 */
export function traceSpanMetrics (counts: () => SpanCounts): { render (out: string[], openMetrics?: boolean): void } {
  const family = new CounterFamily('toolgate_trace_spans_total', 'Sampled spans by what became of them: exported, dropped (the batch queue was full) or failed (their export failed or timed out)')
  const children = OUTCOMES.map(outcome => [outcome, family.child({ outcome })] as const)
  return {
    render (out, openMetrics) {
      const now = counts()
      for (const [outcome, child] of children) child.value = now[outcome]
      family.render(out, openMetrics)
    },
  }
}
