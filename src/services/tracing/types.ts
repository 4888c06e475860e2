/*
 * The `Tracing` shape on its own: `setup.ts` loads `provider.ts` (and with it the SDK) only when
 * tracing is on, and the provider builds what setup returns, so both take the type from here.
 */
import type { Tracer } from '@opentelemetry/api'
import type { NodeTracerProvider } from '@opentelemetry/sdk-trace-node'

/** Tracing as the gateway uses it: one provider, its tracer, and a way to flush on close. */
export interface Tracing {
  readonly provider: NodeTracerProvider
  readonly tracer: Tracer
  /**
   * Whether a tool's code runs with its call's span as OpenTelemetry's active span
   * (`TRACE_ACTIVE_SPAN=true`: an AsyncLocalStorage context manager, which on Node 20 taxes
   * every promise in the process). Off, the span reaches the tool as `ctx.trace` only.
   */
  readonly activeSpan: boolean
  /** Export what is buffered and stop. */
  shutdown (): Promise<void>
}
