import type { Tracing } from './types.js'

/**
 * Tracing from the standard OpenTelemetry environment, or `undefined` (off) when no OTLP
 * endpoint is set, `OTEL_SDK_DISABLED=true` or `OTEL_TRACES_EXPORTER=none`. Off means nothing
 * is installed, and nothing of the SDK is even loaded: no provider, no context manager, no hooks.
 *
 * Read: `OTEL_EXPORTER_OTLP_ENDPOINT` (base URL, `/v1/traces` appended) or
 * `OTEL_EXPORTER_OTLP_TRACES_ENDPOINT` (used as is), `OTEL_EXPORTER_OTLP_[TRACES_]PROTOCOL`
 * (`http/protobuf`, the spec's default, or `http/json`), `OTEL_SERVICE_NAME` (default
 * `toolgate`), `OTEL_RESOURCE_ATTRIBUTES`, `OTEL_TRACES_SAMPLER` and `_ARG`, and toolgate's own
 * `TRACE_ACTIVE_SPAN` (`true`: a tool's code runs with its call's span active), and the batch
 * processor's `OTEL_BSP_*` (`provider.ts`). Headers, timeouts and compression
 * (`OTEL_EXPORTER_OTLP_HEADERS`, ...) are read by the SDK's transport itself.
 */
export async function tracingFromEnv (env: NodeJS.ProcessEnv = process.env): Promise<Tracing | undefined> {
  if (isTrue(env.OTEL_SDK_DISABLED) || env.OTEL_TRACES_EXPORTER === 'none') return undefined
  const url = tracesUrl(env)
  if (url === undefined) return undefined
  const { createTracing } = await import('./provider.js')
  return createTracing(env, url)
}

function tracesUrl (env: NodeJS.ProcessEnv): string | undefined {
  const traces = nonEmpty(env.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT)
  if (traces !== undefined) return traces
  const base = nonEmpty(env.OTEL_EXPORTER_OTLP_ENDPOINT)
  return base === undefined ? undefined : `${base.replace(/\/+$/, '')}/v1/traces`
}

function isTrue (value: string | undefined): boolean {
  return value?.trim().toLowerCase() === 'true'
}

function nonEmpty (value: string | undefined): string | undefined {
  return value === undefined || value.trim() === '' ? undefined : value.trim()
}
