import { context, propagation } from '@opentelemetry/api'
import { AsyncLocalStorageContextManager } from '@opentelemetry/context-async-hooks'
import { W3CTraceContextPropagator } from '@opentelemetry/core'
import { OTLPTraceExporter as OtlpJsonExporter } from '@opentelemetry/exporter-trace-otlp-http'
import { OTLPTraceExporter as OtlpProtoExporter } from '@opentelemetry/exporter-trace-otlp-proto'
import { defaultResource, resourceFromAttributes } from '@opentelemetry/resources'
import { BatchSpanProcessor, NodeTracerProvider, type SpanExporter } from '@opentelemetry/sdk-trace-node'
import { ATTR_SERVICE_NAME, ATTR_SERVICE_VERSION } from '@opentelemetry/semantic-conventions'
import { ConfigError } from '../config.js'
import { VERSION } from '../version.js'
import { PooledIdGenerator } from './id-generator.js'
import { samplerFromEnv } from './sampler.js'
import type { Tracing } from './types.js'

/** The provider, its exporter and the process-wide pieces: loaded only when tracing is on. */
export function createTracing (env: NodeJS.ProcessEnv, url: string): Tracing {
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
  installGlobals()
  return {
    provider,
    tracer: provider.getTracer('toolgate', VERSION),
    shutdown: async () => { await provider.shutdown() },
  }
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

function nonEmpty (value: string | undefined): string | undefined {
  return value === undefined || value.trim() === '' ? undefined : value.trim()
}
