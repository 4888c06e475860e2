import { context, propagation, type Tracer } from '@opentelemetry/api'
import { AsyncLocalStorageContextManager } from '@opentelemetry/context-async-hooks'
import { W3CTraceContextPropagator } from '@opentelemetry/core'
import { OTLPTraceExporter as OtlpJsonExporter } from '@opentelemetry/exporter-trace-otlp-http'
import { OTLPTraceExporter as OtlpProtoExporter } from '@opentelemetry/exporter-trace-otlp-proto'
import { defaultResource, resourceFromAttributes } from '@opentelemetry/resources'
import { BatchSpanProcessor, NodeTracerProvider, type SpanExporter } from '@opentelemetry/sdk-trace-node'
import { ATTR_SERVICE_NAME, ATTR_SERVICE_VERSION } from '@opentelemetry/semantic-conventions'
import { ConfigError } from '../config.js'
import { VERSION } from '../version.js'
import { samplerFromEnv } from './sampler.js'

/** Tracing as the gateway uses it: one provider, its tracer, and a way to flush on close. */
export interface Tracing {
  readonly provider: NodeTracerProvider
  readonly tracer: Tracer
  /** Export what is buffered and stop. */
  shutdown (): Promise<void>
}

/**
 * Tracing from the standard OpenTelemetry environment, or `undefined` (off) when no OTLP
 * endpoint is set, `OTEL_SDK_DISABLED=true` or `OTEL_TRACES_EXPORTER=none`. Off means nothing
 * is installed: no provider, no context manager, no hooks.
 *
 * Read: `OTEL_EXPORTER_OTLP_ENDPOINT` (base URL, `/v1/traces` appended) or
 * `OTEL_EXPORTER_OTLP_TRACES_ENDPOINT` (used as is), `OTEL_EXPORTER_OTLP_[TRACES_]PROTOCOL`
 * (`http/protobuf`, the spec's default, or `http/json`), `OTEL_SERVICE_NAME` (default
 * `toolgate`), `OTEL_RESOURCE_ATTRIBUTES`, `OTEL_TRACES_SAMPLER` and `_ARG`. Headers, timeouts and
 * batch sizes (`OTEL_EXPORTER_OTLP_HEADERS`, `OTEL_BSP_*`) are read by the SDK itself.
 */
export function tracingFromEnv (env: NodeJS.ProcessEnv = process.env): Tracing | undefined {
  if (isTrue(env.OTEL_SDK_DISABLED) || env.OTEL_TRACES_EXPORTER === 'none') return undefined
  const url = tracesUrl(env)
  if (url === undefined) return undefined
  const protocol = env.OTEL_EXPORTER_OTLP_TRACES_PROTOCOL ?? env.OTEL_EXPORTER_OTLP_PROTOCOL ?? 'http/protobuf'
  const exporter = exporterFor(protocol, url)
  const provider = new NodeTracerProvider({
    resource: defaultResource().merge(resourceFromAttributes({
      [ATTR_SERVICE_NAME]: nonEmpty(env.OTEL_SERVICE_NAME) ?? 'toolgate',
      [ATTR_SERVICE_VERSION]: VERSION,
    })),
    sampler: samplerFromEnv(env),
    spanProcessors: [new BatchSpanProcessor(exporter)],
  })
  installGlobals()
  return {
    provider,
    tracer: provider.getTracer('toolgate', VERSION),
    shutdown: async () => { await provider.shutdown() },
  }
}

function tracesUrl (env: NodeJS.ProcessEnv): string | undefined {
  const traces = nonEmpty(env.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT)
  if (traces !== undefined) return traces
  const base = nonEmpty(env.OTEL_EXPORTER_OTLP_ENDPOINT)
  return base === undefined ? undefined : `${base.replace(/\/+$/, '')}/v1/traces`
}

function exporterFor (protocol: string, url: string): SpanExporter {
  if (protocol === 'http/json') return new OtlpJsonExporter({ url })
  if (protocol === 'http/protobuf') return new OtlpProtoExporter({ url })
  // gRPC needs another exporter (and its native dependencies): say so rather than export nothing.
  throw new ConfigError(`invalid setting "OTEL_EXPORTER_OTLP_PROTOCOL": "${protocol}" is not supported; use http/protobuf or http/json`)
}

let globalsInstalled = false

/**
 * The process-wide pieces, once: W3C trace context (so `traceparent` / `tracestate` on a
 * request continue the caller's trace) and an AsyncLocalStorage context manager (so code a tool
 * runs sees its call's span as the active one). Tracer providers stay per gateway, never global.
 */
function installGlobals (): void {
  if (globalsInstalled) return
  globalsInstalled = true
  propagation.setGlobalPropagator(new W3CTraceContextPropagator())
  context.setGlobalContextManager(new AsyncLocalStorageContextManager().enable())
}

function isTrue (value: string | undefined): boolean {
  return value?.trim().toLowerCase() === 'true'
}

function nonEmpty (value: string | undefined): string | undefined {
  return value === undefined || value.trim() === '' ? undefined : value.trim()
}
