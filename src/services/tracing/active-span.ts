import { context, trace } from '@opentelemetry/api'

/*
 * The active span's ids, for the metrics' exemplars and the log lines. Only the API (a no-op
 * until a tracer provider is installed), so importing this loads none of the SDK.
 */

/** The ids of the span active now (the call's), for an exemplar; none for a trace the sampler left out (no backend has it). */
export function activeSpanIds (): { traceId: string, spanId: string } | undefined {
  const span = trace.getSpan(context.active())
  if (span === undefined || !span.isRecording()) return undefined
  const { traceId, spanId } = span.spanContext()
  return { traceId, spanId }
}

/** pino `mixin`: the active span's ids on every log line written while tracing is on. */
export function traceIdsOfActiveSpan (): Record<string, string> {
  const span = trace.getSpan(context.active())
  if (span === undefined) return {}
  const { traceId, spanId, traceFlags } = span.spanContext()
  return { trace_id: traceId, span_id: spanId, trace_flags: `0${traceFlags.toString(16)}`.slice(-2) }
}
