import { context, diag, DiagLogLevel, propagation, type DiagLogger } from '@opentelemetry/api'
import { AsyncLocalStorageContextManager } from '@opentelemetry/context-async-hooks'
import { W3CTraceContextPropagator, type InstrumentationScope } from '@opentelemetry/core'
import { OTLPTraceExporter as OtlpJsonExporter } from '@opentelemetry/exporter-trace-otlp-http'
import { defaultResource, resourceFromAttributes, type Resource } from '@opentelemetry/resources'
import { BatchSpanProcessor, type SpanProcessor } from '@opentelemetry/sdk-trace-node'
import { ATTR_SERVICE_NAME, ATTR_SERVICE_VERSION } from '@opentelemetry/semantic-conventions'
import { ConfigError } from '../config.js'
import { VERSION } from '../version.js'
import { PooledIdGenerator } from './id-generator.js'
import { protobufExporter } from './protobuf-exporter.js'
import type { SpanLimits } from './recorded-span.js'
import { samplerFromEnv } from './sampler.js'
import { EncodedSpanBatches, type BatchSettings } from './span-batches.js'
import { GatewayTracer } from './tracer.js'
import type { Tracing } from './types.js'

/** The tracer, its batch processor and exporter, and the process-wide pieces: loaded only when tracing is on. */
export function createTracing (env: NodeJS.ProcessEnv, url: string): Tracing {
  const activeSpan = activeSpanSetting(env.TRACE_ACTIVE_SPAN)
  const protocol = env.OTEL_EXPORTER_OTLP_TRACES_PROTOCOL ?? env.OTEL_EXPORTER_OTLP_PROTOCOL ?? 'http/protobuf'
  const resource = resourceFrom(env)
  const scope = { name: 'toolgate', version: VERSION }
  const processor = processorFor(protocol, url, batchSettings(env), resource, scope)
  const source = { resource, scope, processor, limits: spanLimits(env) }
  installGlobals(activeSpan)
  return {
    tracer: new GatewayTracer(source, samplerFromEnv(env), new PooledIdGenerator()),
    activeSpan,
    ...(processor instanceof EncodedSpanBatches ? { spanCounts: () => processor.counts } : {}),
    logTo: log => { diag.setLogger(diagnosticsTo(log), { logLevel: DiagLogLevel.WARN, suppressOverrideMessage: true }) },
    forceFlush: async () => { await processor.forceFlush() },
    shutdown: async () => { await processor.shutdown() },
  }
}

function processorFor (protocol: string, url: string, settings: BatchSettings, resource: Resource, scope: InstrumentationScope): SpanProcessor {
  if (protocol === 'http/protobuf') return new EncodedSpanBatches(protobufExporter(url), settings, resource, scope)
  if (protocol === 'http/json') return new BatchSpanProcessor(new OtlpJsonExporter({ url }), settings)
  // gRPC needs another exporter (and its native dependencies): say so rather than export nothing.
  throw new ConfigError(`invalid setting "OTEL_EXPORTER_OTLP_PROTOCOL": "${protocol}" is not supported; use http/protobuf or http/json`)
}

/** The batch processor's settings (`OTEL_BSP_*`), with the SDK's defaults; a batch is at most the queue. */
function batchSettings (env: NodeJS.ProcessEnv): BatchSettings {
  const maxQueueSize = setting(env, 'OTEL_BSP_MAX_QUEUE_SIZE', 2048, 1)
  const maxExportBatchSize = setting(env, 'OTEL_BSP_MAX_EXPORT_BATCH_SIZE', 512, 1)
  if (maxExportBatchSize > maxQueueSize) diag.warn('BatchSpanProcessor: maxExportBatchSize must be smaller or equal to maxQueueSize, setting maxExportBatchSize to match maxQueueSize')
  return {
    maxQueueSize,
    maxExportBatchSize: Math.min(maxExportBatchSize, maxQueueSize),
    scheduledDelayMillis: setting(env, 'OTEL_BSP_SCHEDULE_DELAY', 5000, 0),
    exportTimeoutMillis: setting(env, 'OTEL_BSP_EXPORT_TIMEOUT', 30000, 0),
  }
}

function setting (env: NodeJS.ProcessEnv, name: string, fallback: number, least: number): number {
  const raw = nonEmpty(env[name])
  if (raw === undefined) return fallback
  const value = Number(raw)
  if (!Number.isInteger(value) || value < least) throw new ConfigError(`invalid setting "${name}": "${env[name]!}" is not a whole number of ${least} or more`)
  return value
}

/**
 * The SDK's defaults (`telemetry.sdk.*`) and toolgate's (`service.name` toolgate, its version),
 * then `OTEL_RESOURCE_ATTRIBUTES` (`key=value,...`, percent-encoded), then `OTEL_SERVICE_NAME`,
 * which wins over a `service.name` in the list, as the specification has it.
 */
function resourceFrom (env: NodeJS.ProcessEnv): Resource {
  const name = nonEmpty(env.OTEL_SERVICE_NAME)
  return defaultResource()
    .merge(resourceFromAttributes({ [ATTR_SERVICE_NAME]: 'toolgate', [ATTR_SERVICE_VERSION]: VERSION }))
    .merge(resourceFromAttributes(resourceAttributes(env.OTEL_RESOURCE_ATTRIBUTES)))
    .merge(resourceFromAttributes(name === undefined ? {} : { [ATTR_SERVICE_NAME]: name }))
}

function resourceAttributes (raw: string | undefined): Record<string, string> {
  const attributes: Record<string, string> = {}
  for (const pair of (raw ?? '').split(',')) {
    if (pair.trim() === '') continue
    const at = pair.indexOf('=')
    const key = at === -1 ? undefined : decoded(pair.slice(0, at).trim())
    const value = at === -1 ? undefined : decoded(pair.slice(at + 1).trim())
    if (key === undefined || key === '' || value === undefined) throw new ConfigError(`invalid setting "OTEL_RESOURCE_ATTRIBUTES": "${pair}" is not key=value (percent-encoded)`)
    attributes[key] = value
  }
  return attributes
}

function decoded (text: string): string | undefined {
  try {
    return decodeURIComponent(text)
  } catch {
    return undefined
  }
}

/** The OpenTelemetry span limits (the SDK's defaults: 128 of each, values unbounded, as is a length limit of 0). */
function spanLimits (env: NodeJS.ProcessEnv): SpanLimits {
  const limit = (names: readonly string[], fallback: number): number => {
    const name = names.find(n => nonEmpty(env[n]) !== undefined)
    if (name === undefined) return fallback
    const value = Number(env[name]!.trim())
    if (!Number.isInteger(value) || value < 0) throw new ConfigError(`invalid setting "${name}": "${env[name]!}" is not a whole number of 0 or more`)
    return value
  }
  return {
    attributeCount: limit(['OTEL_SPAN_ATTRIBUTE_COUNT_LIMIT', 'OTEL_ATTRIBUTE_COUNT_LIMIT'], 128),
    attributeValueLength: limit(['OTEL_SPAN_ATTRIBUTE_VALUE_LENGTH_LIMIT', 'OTEL_ATTRIBUTE_VALUE_LENGTH_LIMIT'], Infinity),
    eventCount: limit(['OTEL_SPAN_EVENT_COUNT_LIMIT'], 128),
    linkCount: limit(['OTEL_SPAN_LINK_COUNT_LIMIT'], 128),
    // The specification's names, then the ones the SDK reads.
    attributesPerEvent: limit(['OTEL_EVENT_ATTRIBUTE_COUNT_LIMIT', 'OTEL_SPAN_ATTRIBUTE_PER_EVENT_COUNT_LIMIT'], 128),
    attributesPerLink: limit(['OTEL_LINK_ATTRIBUTE_COUNT_LIMIT', 'OTEL_SPAN_ATTRIBUTE_PER_LINK_COUNT_LIMIT'], 128),
  }
}

let propagatorInstalled = false
let contextManagerInstalled = false

/**
 * The process-wide pieces, once each: W3C trace context (so `traceparent` / `tracestate` on a
 * request continue the caller's trace) and, with `activeSpan`, an AsyncLocalStorage context
 * manager (so code a tool runs sees its call's span as the active one). Node 20's
 * AsyncLocalStorage runs a hook on every promise the process makes once anything enters a
 * context (the SDK's exporter does, on every export): measured at 10 to 25 % of a call's CPU,
 * sampled or not, so it is the operator's choice. Tracers stay per gateway, never global.
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

/** OpenTelemetry's diagnostics as log lines, `opentelemetry:` first (what is above warn is dropped by the level given). */
function diagnosticsTo (log: { warn (message: string): void, error (message: string): void }): DiagLogger {
  const line = (message: string, args: unknown[]): string => `opentelemetry: ${[message, ...args.map(arg => arg instanceof Error ? arg.message : String(arg))].join(' ')}`
  const ignore = (): void => {}
  return {
    error: (message, ...args) => { log.error(line(message, args)) },
    warn: (message, ...args) => { log.warn(line(message, args)) },
    info: ignore,
    debug: ignore,
    verbose: ignore,
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
