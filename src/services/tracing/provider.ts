import { context, propagation } from '@opentelemetry/api'
import { AsyncLocalStorageContextManager } from '@opentelemetry/context-async-hooks'
import { W3CTraceContextPropagator } from '@opentelemetry/core'
import { OTLPTraceExporter as OtlpJsonExporter } from '@opentelemetry/exporter-trace-otlp-http'
import { defaultResource, resourceFromAttributes } from '@opentelemetry/resources'
import { BatchSpanProcessor, NodeTracerProvider, type SpanExporter } from '@opentelemetry/sdk-trace-node'
import { ATTR_SERVICE_NAME, ATTR_SERVICE_VERSION } from '@opentelemetry/semantic-conventions'
import { ConfigError } from '../config.js'
import { VERSION } from '../version.js'
import { PooledIdGenerator } from './id-generator.js'
import { protobufExporter } from './protobuf-exporter.js'
import { samplerFromEnv } from './sampler.js'
import type { Tracing } from './types.js'

/** The provider, its exporter and the process-wide pieces: loaded only when tracing is on. */
export function createTracing (env: NodeJS.ProcessEnv, url: string): Tracing {
  const activeSpan = activeSpanSetting(env.TRACE_ACTIVE_SPAN)
  const protocol = env.OTEL_EXPORTER_OTLP_TRACES_PROTOCOL ?? env.OTEL_EXPORTER_OTLP_PROTOCOL ?? 'http/protobuf'
  const exporter = exporterFor(protocol, url)
  const provider = new NodeTracerProvider({
    resource: defaultResource().merge(resourceFromAttributes({
      [ATTR_SERVICE_NAME]: nonEmpty(env.OTEL_SERVICE_NAME) ?? 'toolgate',
      [ATTR_SERVICE_VERSION]: VERSION,
    })),
    sampler: samplerFromEnv(env),
    idGenerator: new PooledIdGenerator(),
    spanProcessors: [new BatchSpanProcessor(exporter)],
  })
  installGlobals(activeSpan)
  return {
    provider,
    tracer: provider.getTracer('toolgate', VERSION),
    activeSpan,
    shutdown: async () => { await provider.shutdown() },
  }
}

function exporterFor (protocol: string, url: string): SpanExporter {
  if (protocol === 'http/json') return new OtlpJsonExporter({ url })
  if (protocol === 'http/protobuf') return protobufExporter(url)
  // gRPC needs another exporter (and its native dependencies): say so rather than export nothing.
  throw new ConfigError(`invalid setting "OTEL_EXPORTER_OTLP_PROTOCOL": "${protocol}" is not supported; use http/protobuf or http/json`)
}

let propagatorInstalled = false
let contextManagerInstalled = false

/**
 * The process-wide pieces, once each: W3C trace context (so `traceparent` / `tracestate` on a
 * request continue the caller's trace) and, with `activeSpan`, an AsyncLocalStorage context
 * manager (so code a tool runs sees its call's span as the active one). Node 20's
 * AsyncLocalStorage runs a hook on every promise the process makes once anything enters a
 * context (the SDK's exporter does, on every export): measured at 10 to 25 % of a call's CPU,
 * sampled or not, so it is the operator's choice. Tracer providers stay per gateway, never global.
 */
function installGlobals (activeSpan: boolean): void {
  if (!propagatorInstalled) {
    propagatorInstalled = true
    propagation.setGlobalPropagator(new W3CTraceContextPropagator())
  }
  if (activeSpan && !contextManagerInstalled) {
    contextManagerInstalled = true
    context.setGlobalContextManager(new AsyncLocalStorageContextManager().enable())
  }
}

function activeSpanSetting (raw: string | undefined): boolean {
  const value = raw?.trim().toLowerCase()
  if (value === undefined || value === '' || value === 'false') return false
  if (value === 'true') return true
  throw new ConfigError(`invalid setting "TRACE_ACTIVE_SPAN": "${raw ?? ''}" is not true or false`)
}

function nonEmpty (value: string | undefined): string | undefined {
  return value === undefined || value.trim() === '' ? undefined : value.trim()
}
