import type { Redis } from 'ioredis'
import type { GatewayApp, GatewayFacts, ToolLogger } from '../../core/app-context.js'
import type { CallRecord } from '../../core/call-record.js'
import { defineToolCatalog, type ToolCatalog } from '../../core/catalog.js'
import type { AnyTool } from '../../core/tool.js'
import { approvalOptionsOf } from '../approvals/options.js'
import { approvalPeopleServices, type ApprovalPeopleServices } from '../approvals/page-services.js'
import { compileApprovalRules } from '../approvals/rules.js'
import { approvalTelemetry } from '../approvals/telemetry.js'
import type { AuditTrail } from '../audit/audit-trail.js'
import { openAuditTrail } from '../audit/open.js'
import { GatewayCalls, logsOf } from '../calls/gateway-calls.js'
import { jsonWithin } from '../calls/json-within.js'
import { ConfigError, inputBoundsOf, type Config } from '../config.js'
import { idempotencyStoreOf } from '../idempotency-store.js'
import { LimitMetrics } from '../limits/limit-metrics.js'
import { AuditView } from '../console/audit-view.js'
import { MetricsHistory } from '../console/metrics-history.js'
import { RecentCalls } from '../console/recent-calls.js'
import { limitStoreOf } from '../limits/limit-store.js'
import { ApprovalMetrics } from '../metrics/approval-metrics.js'
import { GatewayMetrics } from '../metrics/gateway-metrics.js'
import { traceSpanMetrics } from '../metrics/trace-metrics.js'
import { createRedisClient, whenReady } from '../redis/client.js'
import { createSharedSlots } from '../redis/shared-slots.js'
import { exemplarOf } from '../tracing/span-ids.js'
import type { Tracing } from '../tracing/types.js'
import type { Upstreams } from '../upstreams/upstreams.js'
import { VERSION } from '../version.js'

export interface GatewayServicesOptions {
  readonly config: Config
  /** The tools served, the upstreams' among them. */
  readonly tools: readonly AnyTool[]
  readonly log: ToolLogger
  readonly upstreams?: Upstreams
  readonly tracing?: Tracing
  /** Where the gateway's routes are mounted (the approval links in webhooks carry it). */
  readonly prefix: string
}

/** Everything the gateway's routes are registered over; `close` stops it all, last opened first. */
export interface GatewayServices {
  readonly catalog: ToolCatalog<GatewayApp>
  readonly facts: GatewayFacts
  readonly calls: GatewayCalls
  /** The latest finished calls of this replica, for `GET /console/calls`. */
  readonly recent: RecentCalls
  /** The last minutes of the metrics, for the console's charts; absent with metrics off. */
  readonly history?: MetricsHistory
  /** The audit file as the console reads it; absent without one (no trail, or stdout). */
  readonly auditView?: AuditView
  readonly metrics: GatewayMetrics
  readonly approvalMetrics?: ApprovalMetrics
  readonly audit?: AuditTrail
  readonly redis?: Redis
  readonly people: ApprovalPeopleServices
  /** Told how many approvals are pending after each sweep (the gauge). */
  readonly onPendingApprovals: (count: number) => void
  close (): Promise<void>
}

/**
 * The gateway's services, made by plain TypeScript (no Fastify): Redis and the shared slots,
 * metrics, the audit trail, the approvals' people and telemetry, the catalog, and the calls
 * every face hands in. A failure half-way closes what was opened before it and throws.
 */
export async function openGatewayServices (options: GatewayServicesOptions): Promise<GatewayServices> {
  const { config, tools, log, upstreams, tracing } = options
  checkToolLimits(config, tools)
  // A budget over a field a covered tool's input lacks stops the start, naming the limit and the tool.
  const operatorLimits = upstreams?.limits
  operatorLimits?.check(tools)
  // A bundle that cannot be served stops the start, naming it; a pattern that may match a down server's tools is logged.
  for (const warning of upstreams?.bundles.current.check(tools, upstreams.complete) ?? []) log.warn({ bundle: warning.bundle }, `${warning.problem} (yet: an upstream is down)`)
  const closers: Array<() => Promise<void> | void> = []
  const close = async (): Promise<void> => {
    for (const closer of closers.splice(0).reverse()) await closer()
  }
  try {
    const redis = config.redisUrl === undefined ? undefined : createRedisClient(config.redisUrl, {
      down: error => { log.warn({ err: error }, `redis unreachable: idempotent calls${config.concurrencyStore === 'redis' ? ' and calls without a valid concurrency slot' : ''} answer 503, rate limits are not enforced until it is back`) },
      up: () => { log.info({}, 'redis reachable again') },
    })
    if (redis !== undefined) closers.push(() => { redis.disconnect() })
    if (redis !== undefined && !await whenReady(redis, 2_000)) log.warn({}, 'redis not reachable at start-up; continuing')
    // With Redis, concurrency domains and per-tool limits hold across replicas too.
    const slots = config.redisUrl === undefined || config.concurrencyStore === 'memory'
      ? undefined
      : createSharedSlots({ ...config, redisUrl: config.redisUrl }, domain => { log.warn({ domain }, 'a concurrency slot expired before its call ended (redis unreachable for longer than SLOT_LEASE_MS)') })
    if (slots !== undefined) closers.push(async () => { await slots.close() })
    await slots?.ready(2_000)
    // `catalog` is read at scrape time only, once it exists.
    const metrics: GatewayMetrics = new GatewayMetrics(tools, { version: VERSION, queued: () => catalog.scheduler.queued, audit: config.auditLog !== undefined })
    const limitMetrics = config.metrics ? new LimitMetrics() : undefined
    if (limitMetrics !== undefined) {
      metrics.register(...limitMetrics.families)
      metrics.beforeScrape(async () => { await limitMetrics.refresh(catalog as ToolCatalog<unknown>) })
    }
    const approvalMetrics = config.metrics ? new ApprovalMetrics(tools) : undefined
    if (approvalMetrics !== undefined) metrics.register(...approvalMetrics.families)
    if (upstreams !== undefined) {
      metrics.register(...upstreams.families)
      metrics.trackUnlisted(upstreams.features.tools())
    }
    const spanCounts = tracing?.spanCounts
    if (spanCounts !== undefined) metrics.register(traceSpanMetrics(spanCounts))
    const audit = await openAuditTrail(config, log, lines => { metrics.auditDropped(lines) })
    if (audit !== undefined) {
      closers.push(async () => {
        await audit.close()
        // The chain's head, somewhere other than the file: a rewrite of the whole file shows against it.
        log.info({ auditLog: config.auditLog, seq: audit.head.seq, hash: audit.head.hash }, 'audit log closed')
      })
    }
    const auditView = audit === undefined || config.auditLog === undefined || config.auditLog === 'stdout'
      ? undefined
      : new AuditView({ path: config.auditLog, flush: async () => { await audit.flush() }, get head () { return audit.head } })
    const history = config.metrics ? new MetricsHistory(() => metrics.totals(), { intervalMs: 5_000, points: 180 }) : undefined
    if (history !== undefined) {
      history.start()
      closers.push(() => { history.stop() })
    }
    const people = approvalPeopleServices(config, redis, options.prefix)
    // A sign-in that cannot work stops the start (naming the setting); an issuer down now is asked again at the first sign-in.
    const down = await people.signIn?.check()
    if (down !== undefined) log.warn({ issuer: config.jwt?.issuer, err: down }, 'the approvals page\'s sign-in issuer cannot be reached now; the first sign-in asks again')
    if (people.webhookMetrics !== undefined) metrics.register(people.webhookMetrics.family)
    closers.push(() => {
      const stopped = people.webhooks?.close() ?? 0
      if (stopped > 0) log.warn({ webhookDeliveries: stopped }, 'shutting down: approval webhook deliveries under way are stopped')
    })
    const approvalSinks = approvalTelemetry(log, approvalMetrics, () => catalog, () => audit, { recent: people.recent, ...(people.webhooks === undefined ? {} : { webhook: people.webhooks.onEvent }) })
    const catalog: ToolCatalog<GatewayApp> = defineToolCatalog<GatewayApp>(tools as AnyTool<GatewayApp>[], {
      core: {
        defaultTimeoutMs: config.toolTimeoutMs,
        maxQueuePerDomain: config.maxQueuePerSession,
        queueTimeoutMs: config.queueTimeoutMs,
        inputBounds: inputBoundsOf(config),
        toolLimits: Object.fromEntries(Object.entries(config.toolLimits).flatMap(([id, limit]) =>
          limit.maxInFlight === undefined ? [] : [[id, { maxInFlight: limit.maxInFlight, maxQueue: limit.maxQueue }]])),
      },
      idempotency: { store: idempotencyStoreOf(config, redis), ttlMs: config.idempotencyTtlMs },
      onRecord: config.metrics ? metricsObserver(metrics, limitMetrics, tracing !== undefined) : undefined,
      approvals: approvalOptionsOf(config, redis, approvalSinks.onEvent),
      schedulers: slots,
      limits: {
        store: limitStoreOf(config, redis),
        maxSessions: config.limitMaxSessions,
        ...(operatorLimits === undefined || operatorLimits.size === 0 ? {} : { operator: operatorLimits.of }),
      },
      onListenerError: error => { log.error({ err: error }, 'a listener of tool replacements failed; the new tools serve') },
    })
    closers.push(async () => { await catalog.shutdown(0) })
    catalog.onChange(change => {
      metrics.track(change.after.tools)
      approvalMetrics?.track(change.after.tools)
      for (const id of change.removed) {
        if (Object.hasOwn(config.toolLimits, id)) log.warn({ tool: id }, `toolLimits.${id} names a tool that is no longer served`)
      }
    })
    const facts: GatewayFacts = { version: VERSION, startedAt: Date.now(), toolIds: () => catalog.ids(), inFlight: () => catalog.inFlight }
    // Every face's calls enter and are finished here: one compiled set of approval rules, one
    // in-flight gauge, one audit trail, one log line per call, whichever face a call came through.
    const recent = new RecentCalls()
    const calls = new GatewayCalls({
      catalog,
      serialize: jsonWithin(config.maxResponseBytes),
      inFlight: config.metrics ? toolId => metrics.inFlight(toolId) : undefined,
      audit,
      recent,
      approvalRule: config.approvalRules.length === 0 ? undefined : compileApprovalRules(config.approvalRules),
      logs: logsOf(config.logLevel),
    })
    return {
      catalog, facts, calls, recent, metrics, people, close,
      onPendingApprovals: approvalSinks.onPending,
      ...(approvalMetrics === undefined ? {} : { approvalMetrics }),
      ...(audit === undefined ? {} : { audit }),
      ...(auditView === undefined ? {} : { auditView }),
      ...(history === undefined ? {} : { history }),
      ...(redis === undefined ? {} : { redis }),
    }
  } catch (error) {
    await close()
    throw error
  }
}

/** Traced, each duration keeps its (sampled) call's span as its exemplar; untraced, nothing more than counting. */
function metricsObserver (metrics: GatewayMetrics, limits: LimitMetrics | undefined, traced: boolean): (record: CallRecord) => void {
  if (!traced) return record => { metrics.observe(record); limits?.observe(record) }
  return record => { metrics.observe(record, exemplarOf(record.trace)); limits?.observe(record) }
}

/** A limit for a tool that does not exist is a typo: stop start-up and name it. */
function checkToolLimits (config: Config, tools: readonly AnyTool[]): void {
  const ids = new Set(tools.map(tool => tool.id))
  for (const id of Object.keys(config.toolLimits)) {
    if (!ids.has(id)) throw new ConfigError(`invalid setting "toolLimits.${id}": there is no tool "${id}"`)
  }
}
