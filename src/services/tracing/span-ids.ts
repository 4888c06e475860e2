import { context, trace } from '@opentelemetry/api'
import type { TraceContext } from '../../core/tool.js'

/*
 * A call's trace and span ids, for its log line and its duration's exemplar. They are read off
 * the call's own W3C context (the record carries it), not the active context: the gateway
 * installs a context manager only with TRACE_ACTIVE_SPAN, and a record is always at hand.
 * Only the API, so importing this loads none of the SDK.
 */

export interface SpanIds {
  readonly traceId: string
  readonly spanId: string
  /** The W3C flags as two hex digits (`01`: sampled). */
  readonly flags: string
}

/**
 * The ids of a `traceparent` as `call-span.ts` writes it: `00-{32 hex}-{16 hex}-{2 hex}`, fixed
 * widths, so they are slices (a pattern match showed up in the profile of every traced call).
 */
function idsOf (context: TraceContext | undefined): SpanIds | undefined {
  const header = context?.traceparent
  if (header?.length !== TRACEPARENT_LENGTH || !header.startsWith('00-')) return undefined
  return { traceId: header.slice(3, 35), spanId: header.slice(36, 52), flags: header.slice(53, 55) }
}

const TRACEPARENT_LENGTH = 55

/** The ids of a sampled call, for an exemplar; none for a trace the sampler left out (no backend has it). */
export function exemplarOf (context: TraceContext | undefined): SpanIds | undefined {
  const header = context?.traceparent
  // The sampled flag is the lowest bit of the last hex digit ('0'-'9' at 48-57, 'a'-'f' at
  // 97-102): read from its character code before anything is sliced.
  if (header?.length !== TRACEPARENT_LENGTH) return undefined
  const digit = header.charCodeAt(54)
  if (((digit <= 57 ? digit - 48 : digit - 87) & 1) !== 1) return undefined
  return idsOf(context)
}

/** The ids as a log line carries them. */
export function logFieldsOf (context: TraceContext | undefined): { trace_id: string, span_id: string, trace_flags: string } | undefined {
  const ids = idsOf(context)
  return ids === undefined ? undefined : { trace_id: ids.traceId, span_id: ids.spanId, trace_flags: ids.flags }
}

/** pino `mixin` with TRACE_ACTIVE_SPAN: the active span's ids on every line written inside a call. */
export function traceIdsOfActiveSpan (): Record<string, string> {
  const span = trace.getSpan(context.active())
  if (span === undefined) return {}
  const { traceId, spanId, traceFlags } = span.spanContext()
  return { trace_id: traceId, span_id: spanId, trace_flags: `0${traceFlags.toString(16)}`.slice(-2) }
}
