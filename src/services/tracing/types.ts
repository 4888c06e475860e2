/*
 * The `Tracing` shape on its own: `setup.ts` loads `provider.ts` (and with it the SDK) only when
 * tracing is on, and the provider builds what setup returns, so both take the type from here.
 */
import type { Tracer } from '@opentelemetry/api'

/** Tracing as the gateway uses it: its tracer, and ways to flush and to stop. */
export interface Tracing {
  readonly tracer: Tracer
  /**
   * Whether a tool's code runs with its call's span as OpenTelemetry's active span
   * (`TRACE_ACTIVE_SPAN=true`: an AsyncLocalStorage context manager, which on Node 20 taxes
   * every promise in the process). Off, the span reaches the tool as `ctx.trace` only.
   */
  readonly activeSpan: boolean
  /**
   * Send OpenTelemetry's own warnings and errors (its process-wide `diag`: failed exports, dropped
   * spans) to this log. Process-wide: for the gateway's own process, not one it is embedded in.
   */
  readonly logTo?: (log: { warn (message: string): void, error (message: string): void }) => void
  /** What became of the sampled spans so far, where the processor counts them (http/protobuf). */
  readonly spanCounts?: () => SpanCounts
  /** Export every span ended so far. */
  forceFlush (): Promise<void>
  /** Export what is buffered and stop. */
  shutdown (): Promise<void>
}

/** Sampled spans so far: exported, dropped because the queue was full, lost to a failed or timed-out export. */
export interface SpanCounts {
  readonly exported: number
  readonly dropped: number
  readonly failed: number
}
