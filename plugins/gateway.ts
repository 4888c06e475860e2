import type { FastifyInstance } from 'fastify'
import { serializerCompiler, validatorCompiler } from 'fastify-type-provider-zod'
import type { GatewayApp, GatewayFacts } from '../src/core/app-context.js'
import { defineToolCatalog, MemoryIdempotencyStore, type AnyTool, type CallRecord, type ToolCatalog } from '../src/index.js'
import { ConfigError, type Config } from '../src/services/config.js'
import { GatewayMetrics } from '../src/services/metrics/gateway-metrics.js'
import { createRedisClient, whenReady } from '../src/services/redis/client.js'
import { RedisIdempotencyStore } from '../src/services/redis/idempotency-store.js'
import { VERSION } from '../src/services/version.js'
import { healthRoutes } from './health.js'
import { countEarlyFailure, metricsPlugin } from './metrics.js'
import { openApiPlugin } from './openapi.js'
import { problemPlugin, type ProblemOptions } from './problem.js'
import { requestIdPlugin } from './request-id.js'
import { toolRoutes } from './tool-routes.js'
import type { AuditTrail } from '../src/services/audit/audit-trail.js'
import type { Tracing } from '../src/services/tracing/setup.js'
import { auditEarlyRefusal, openAuditTrail } from './audit.js'
import { activeSpanIds, callTracer, registerHttpTracing } from './tracing.js'

declare module 'fastify' {
  interface FastifyInstance {
    catalog: ToolCatalog<GatewayApp>
    gatewayMetrics: GatewayMetrics
    /** The audit trail (`AUDIT_LOG`), or null: approvals call `audit.approvalDecided(...)`. */
    audit: AuditTrail | null
  }
}

export interface GatewayOptions {
  readonly config: Config
  readonly tools: readonly AnyTool[]
  /** OpenTelemetry tracing (`tracingFromEnv`); absent, nothing is traced and nothing is installed. */
  readonly tracing?: Tracing
}

/**
 * Everything the gateway serves, registered on `app` in a visible order: errors, request ids,
 * the document, metrics, health, the tools. `buildApp` calls it on a new Fastify instance; the
 * `toolgate` plugin calls it inside a host's app, under the host's prefix. Same routes, errors,
 * operations and metrics either way.
 */
export async function registerGateway (app: FastifyInstance, options: GatewayOptions): Promise<ToolCatalog<GatewayApp>> {
  const { config, tools } = options
  checkToolLimits(config, tools)
  // First, so that the HTTP server span covers every route and hook registered after it.
  if (options.tracing !== undefined) await registerHttpTracing(app, options.tracing)
  const redis = config.redisUrl === undefined ? undefined : createRedisClient(config.redisUrl, {
    down: error => { app.log.warn({ err: error }, 'redis unreachable: idempotent calls answer 503, rate limits are not enforced until it is back') },
    up: () => { app.log.info('redis reachable again') },
  })
  if (redis !== undefined && !await whenReady(redis, 2_000)) app.log.warn('redis not reachable at start-up; continuing')
  // `catalog` is read at scrape time only, once it exists.
  const metrics: GatewayMetrics = new GatewayMetrics(tools, { version: VERSION, queued: () => catalog.scheduler.queued, audit: config.auditLog !== undefined })
  const audit = await openAuditTrail(config, metrics, app.log)
  const catalog = defineToolCatalog<GatewayApp>(tools as AnyTool<GatewayApp>[], {
    core: {
      defaultTimeoutMs: config.toolTimeoutMs,
      maxQueuePerDomain: config.maxQueuePerSession,
      queueTimeoutMs: config.queueTimeoutMs,
      toolLimits: Object.fromEntries(Object.entries(config.toolLimits).flatMap(([id, limit]) =>
        limit.maxInFlight === undefined ? [] : [[id, { maxInFlight: limit.maxInFlight, maxQueue: limit.maxQueue }]])),
    },
    idempotency: {
      store: redis === undefined ? new MemoryIdempotencyStore({ maxEntries: config.idempotencyMaxEntries }) : new RedisIdempotencyStore(redis, config.redisPrefix),
      ttlMs: config.idempotencyTtlMs,
    },
    onRecord: config.metrics ? metricsObserver(metrics, options.tracing !== undefined) : undefined,
  })
  const facts: GatewayFacts = {
    version: VERSION,
    startedAt: Date.now(),
    toolIds: () => catalog.ids(),
    inFlight: () => catalog.inFlight,
  }

  app.setValidatorCompiler(validatorCompiler)
  app.setSerializerCompiler(serializerCompiler)
  app.decorate('catalog', catalog)
  app.decorate('gatewayMetrics', metrics)
  app.decorate('audit', audit ?? null)
  app.decorateRequest('callRecord', null)

  await app.register(problemPlugin, { onToolRouteFailure: earlyFailureHook(config.metrics ? countEarlyFailure(metrics) : undefined, audit === undefined ? undefined : auditEarlyRefusal(audit, tools)) })
  await app.register(requestIdPlugin)
  await app.register(openApiPlugin, { version: VERSION, ui: config.docs })
  if (config.metrics) await app.register(metricsPlugin, { metrics, openMetrics: options.tracing !== undefined })
  await app.register(healthRoutes, { catalog: catalog as ToolCatalog<never> })
  await app.register(toolRoutes, {
    catalog,
    facts,
    admission: { config, onAuthFailure: config.metrics ? reason => { metrics.authFailure(reason) } : undefined },
    inFlight: config.metrics ? toolId => metrics.inFlight(toolId) : undefined,
    rateLimit: { config, redis },
    maxResponseBytes: config.maxResponseBytes,
    bodyLimit: config.bodyLimit,
    traceCall: options.tracing === undefined ? undefined : callTracer(options.tracing, tools),
    audit,
  })
  app.addHook('onClose', async () => {
    await catalog.shutdown(0)
    redis?.disconnect()
    if (audit !== undefined) {
      await audit.close()
      // The chain's head, somewhere other than the file: a rewrite of the whole file shows against it.
      app.log.info({ auditLog: config.auditLog, seq: audit.head.seq, hash: audit.head.hash }, 'audit log closed')
    }
  })
  return catalog
}

/** Traced, each duration keeps the active (tool call) span as its exemplar; untraced, nothing more than counting. */
function metricsObserver (metrics: GatewayMetrics, traced: boolean): (record: CallRecord) => void {
  if (!traced) return record => { metrics.observe(record) }
  return record => { metrics.observe(record, activeSpanIds()) }
}

type EarlyFailureHook = NonNullable<ProblemOptions['onToolRouteFailure']>

/** Metrics and audit both hear of tool-route failures before the pipeline; either may be off. */
function earlyFailureHook (count: EarlyFailureHook | undefined, audit: EarlyFailureHook | undefined): EarlyFailureHook | undefined {
  if (count === undefined || audit === undefined) return count ?? audit
  return (...args) => { count(...args); audit(...args) }
}

/** A limit for a tool that does not exist is a typo: stop start-up and name it. */
function checkToolLimits (config: Config, tools: readonly AnyTool[]): void {
  const ids = new Set(tools.map(tool => tool.id))
  for (const id of Object.keys(config.toolLimits)) {
    if (!ids.has(id)) throw new ConfigError(`invalid setting "toolLimits.${id}": there is no tool "${id}"`)
  }
}
