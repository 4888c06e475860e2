import type { FastifyInstance } from 'fastify'
import { serializerCompiler, validatorCompiler } from 'fastify-type-provider-zod'
import type { GatewayApp, GatewayFacts } from '../src/core/app-context.js'
import { defineToolCatalog, type AnyTool, type CallRecord, type ToolCatalog, type ToolDeclaration } from '../src/index.js'
import { CatalogUpdates, ToolReplacementError, type ToolReplacement } from '../src/services/loading/catalog-updates.js'
import { loadToolsFromDir } from '../src/services/loading/loader.js'
import { ToolDocuments } from './openapi/tool-document.js'
import { approvableBy } from './openapi/tool-operation.js'
import { ConfigError, inputBoundsOf, type Config } from '../src/services/config.js'
import { GatewayMetrics } from '../src/services/metrics/gateway-metrics.js'
import { traceSpanMetrics } from '../src/services/metrics/trace-metrics.js'
import { createRedisClient, whenReady } from '../src/services/redis/client.js'
import { idempotencyStoreOf } from '../src/services/idempotency-store.js'
import { createSharedSlots } from '../src/services/redis/shared-slots.js'
import { VERSION } from '../src/services/version.js'
import { healthRoutes } from './http/health.js'
import { boundJsonBodies } from './http/json-body.js'
import { countEarlyFailure, metricsPlugin } from './observability/metrics.js'
import { openApiPlugin } from './openapi/openapi.js'
import { problemPlugin, type ProblemOptions } from './http/problem.js'
import { queryCredentialsPlugin } from './access/query-credentials.js'
import { requestIdPlugin } from './http/request-id.js'
import { toolRoutes } from './tools/routes.js'
import { jsonWithin } from '../src/services/calls/json-within.js'
import { GatewayCalls, logsOf } from '../src/services/calls/gateway-calls.js'
import { admissionPlugin } from './access/admission.js'
import { intentRoutes } from './tools/intents.js'
import { mcpRoutes } from './mcp/routes.js'
import { sealSource } from '../src/services/mcp/request-state.js'
import { sharedSecret } from '../src/services/redis/shared-secret.js'
import { rateLimitingEnabled, rateLimitPlugin } from './access/rate-limit.js'
import { protectedResourceRoutes, resourceMetadataParam } from './access/protected-resource.js'
import { approvalRoutes, approvalTelemetry } from './approvals/routes.js'
import { approvalOptionsOf } from '../src/services/approvals/options.js'
import { compileApprovalRules } from '../src/services/approvals/rules.js'
import { ApprovalMetrics } from '../src/services/metrics/approval-metrics.js'
import { approvalPeopleServices } from '../src/services/approvals/page-services.js'
import { approvalsSessionHook } from './approvals/sign-in.js'
import type { AuditTrail } from '../src/services/audit/audit-trail.js'
import type { Tracing } from '../src/services/tracing/types.js'
import { auditEarlyRefusal } from './observability/audit.js'
import { openAuditTrail } from '../src/services/audit/open.js'
import { exemplarOf } from '../src/services/tracing/span-ids.js'
import type { Upstreams } from '../src/services/upstreams/upstreams.js'
import { upstreamRoutes } from './tools/upstreams.js'

declare module 'fastify' {
  interface FastifyInstance {
    catalog: ToolCatalog<GatewayApp>
    /**
     * Replace every tool at once, while serving: resolves with what changed, rejects with a
     * `ToolReplacementError` (and the tools serving stay) when the new tools are refused.
     */
    replaceTools: (tools: ReadonlyArray<AnyTool | ToolDeclaration<any, any, any>>) => Promise<ToolReplacement> // eslint-disable-line @typescript-eslint/no-explicit-any -- declarations of any schema shape
    /** Load the tools folder again (`toolsDir`), as `replaceTools` does with its tools. */
    reloadTools: () => Promise<ToolReplacement>
    /** The whole OpenAPI document of the tools serving now, as `openapi/openapi.json` commits it. */
    openapiDocument: () => Record<string, unknown>
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
  /** The folder `tools` came from, which `reloadTools` loads again (absent: it refuses). */
  readonly toolsDir?: string
  /** Upstream MCP servers, started: their tools serve beside `tools`, and their list changes reach the catalog. */
  readonly upstreams?: Upstreams
}

/**
 * Everything the gateway serves, registered on `app` in a visible order: errors, request ids,
 * CORS, the refusal of credentials in the query, the document, metrics, health, the tools (and
 * their per-caller documents). `buildApp` calls it on a new Fastify instance; the `toolgate`
 * plugin calls it inside a host's app, under the host's prefix. Same routes, errors,
 * operations and metrics either way.
 */
export async function registerGateway (app: FastifyInstance, options: GatewayOptions): Promise<ToolCatalog<GatewayApp>> {
  const { config, upstreams } = options
  // The tools the gateway was given (or its folder holds), then every upstream's, server by server.
  let local = options.tools
  const tools = upstreams === undefined ? local : [...local, ...upstreams.tools()]
  checkToolLimits(config, tools)
  // First, so that the HTTP server span covers every route and hook registered after it.
  // The Fastify instrumentation (and the SDK behind it) loads only when tracing is on.
  const traced = options.tracing === undefined ? undefined : { tracing: options.tracing, faces: await import('./observability/tracing.js') }
  if (traced !== undefined) await traced.faces.registerHttpTracing(app, traced.tracing)
  const redis = config.redisUrl === undefined ? undefined : createRedisClient(config.redisUrl, {
    down: error => { app.log.warn({ err: error }, `redis unreachable: idempotent calls${config.concurrencyStore === 'redis' ? ' and calls without a valid concurrency slot' : ''} answer 503, rate limits are not enforced until it is back`) },
    up: () => { app.log.info('redis reachable again') },
  })
  if (redis !== undefined && !await whenReady(redis, 2_000)) app.log.warn('redis not reachable at start-up; continuing')
  // With Redis, concurrency domains and per-tool limits hold across replicas too.
  const slots = config.redisUrl === undefined || config.concurrencyStore === 'memory'
    ? undefined
    : createSharedSlots({ ...config, redisUrl: config.redisUrl }, domain => { app.log.warn({ domain }, 'a concurrency slot expired before its call ended (redis unreachable for longer than SLOT_LEASE_MS)') })
  // Each resource is closed by a hook added as soon as it is open (hooks run last first): a
  // start that fails half-way (buildApp then closes the app) leaves nothing running.
  app.addHook('onClose', async () => {
    await slots?.close()
    redis?.disconnect()
  })
  await slots?.ready(2_000)
  // `catalog` is read at scrape time only, once it exists.
  const metrics: GatewayMetrics = new GatewayMetrics(tools, { version: VERSION, queued: () => catalog.scheduler.queued, audit: config.auditLog !== undefined })
  const approvalMetrics = config.metrics ? new ApprovalMetrics(tools) : undefined
  if (approvalMetrics !== undefined) metrics.register(...approvalMetrics.families)
  if (upstreams !== undefined) metrics.register(...upstreams.families)
  const spanCounts = options.tracing?.spanCounts
  if (spanCounts !== undefined) metrics.register(traceSpanMetrics(spanCounts))
  const audit = await openAuditTrail(config, app.log, lines => { metrics.auditDropped(lines) })
  if (audit !== undefined) {
    app.addHook('onClose', async () => {
      await audit.close()
      // The chain's head, somewhere other than the file: a rewrite of the whole file shows against it.
      app.log.info({ auditLog: config.auditLog, seq: audit.head.seq, hash: audit.head.hash }, 'audit log closed')
    })
  }
  const documents = new ToolDocuments({ gateway: () => app.swagger() as unknown as Record<string, unknown>, version: VERSION, prefix: app.prefix, defaultTimeoutMs: config.toolTimeoutMs, approvable: approvableBy(config.approvalRules) })
  const people = approvalPeopleServices(config, redis, app.prefix)
  if (people.webhookMetrics !== undefined) metrics.register(people.webhookMetrics.family)
  const approvalSinks = approvalTelemetry(app.log, approvalMetrics, () => catalog, () => audit, { recent: people.recent, ...(people.webhooks === undefined ? {} : { webhook: people.webhooks.onEvent }) })
  const catalog = defineToolCatalog<GatewayApp>(tools as AnyTool<GatewayApp>[], {
    core: {
      defaultTimeoutMs: config.toolTimeoutMs,
      maxQueuePerDomain: config.maxQueuePerSession,
      queueTimeoutMs: config.queueTimeoutMs,
      inputBounds: inputBoundsOf(config),
      toolLimits: Object.fromEntries(Object.entries(config.toolLimits).flatMap(([id, limit]) =>
        limit.maxInFlight === undefined ? [] : [[id, { maxInFlight: limit.maxInFlight, maxQueue: limit.maxQueue }]])),
    },
    idempotency: {
      store: idempotencyStoreOf(config, redis),
      ttlMs: config.idempotencyTtlMs,
    },
    onRecord: config.metrics ? metricsObserver(metrics, options.tracing !== undefined) : undefined,
    approvals: approvalOptionsOf(config, redis, approvalSinks.onEvent),
    schedulers: slots,
    onListenerError: error => { app.log.error({ err: error }, 'a listener of tool replacements failed; the new tools serve') },
  })
  const facts: GatewayFacts = {
    version: VERSION,
    startedAt: Date.now(),
    toolIds: () => catalog.ids(),
    inFlight: () => catalog.inFlight,
  }

  boundJsonBodies(app, inputBoundsOf(config))
  app.setValidatorCompiler(validatorCompiler)
  app.setSerializerCompiler(serializerCompiler)
  app.decorate('catalog', catalog)
  app.decorate('gatewayMetrics', metrics)
  app.decorate('audit', audit ?? null)
  app.decorateRequest('callRecord', null)
  catalog.onChange(change => {
    // A set installed past CatalogUpdates (app.catalog.replace) gets its document now; until
    // then its document requests answer 503 with Retry-After.
    if (ready) void documents.prepare(change.after).catch((error: unknown) => { app.log.error({ err: error }, 'the OpenAPI document of the new tools could not be generated') })
    metrics.track(change.after.tools)
    approvalMetrics?.track(change.after.tools)
    for (const id of change.removed) {
      if (Object.hasOwn(config.toolLimits, id)) app.log.warn({ tool: id }, `toolLimits.${id} names a tool that is no longer served`)
    }
  })
  let ready = false
  const updates = new CatalogUpdates({
    catalog,
    // Before the app is ready its document cannot be generated: onReady generates the set serving then.
    prepare: async set => { if (ready) await documents.prepare(set) },
    log: app.log,
    onOutcome: outcome => { metrics.catalogReplaced(outcome) },
  })
  const withUpstreams = (given: readonly AnyTool<GatewayApp>[]): AnyTool<GatewayApp>[] => upstreams === undefined ? [...given] : [...given, ...upstreams.tools()]
  app.decorate('replaceTools', async (next: Parameters<FastifyInstance['replaceTools']>[0]) => {
    const given = [...next] as AnyTool<GatewayApp>[]
    return await updates.replace(withUpstreams(given), 'api', () => { local = given })
  })
  const { toolsDir } = options
  app.decorate('reloadTools', async () => {
    // The tools folder and every OpenAPI document are read again; a gateway given its tools, with no documents to read, has nothing to reload.
    const documents = upstreams?.file.services.length ?? 0
    if (toolsDir === undefined && documents === 0) throw new ToolReplacementError({ version: catalog.current.version, tools: catalog.current.tools.length }, new Error('this gateway was given its tools, not a tools folder: use replaceTools'))
    let loaded = local as AnyTool<GatewayApp>[]
    let commit = (): void => {}
    return await updates.replace(async () => {
      if (toolsDir !== undefined) loaded = await loadToolsFromDir(toolsDir) as AnyTool<GatewayApp>[]
      if (upstreams === undefined) return [...loaded]
      const reread = await upstreams.reload()
      commit = reread.commit
      return [...loaded, ...reread.tools]
    }, toolsDir ?? 'openapi documents', () => {
      local = loaded
      commit()
    })
  })
  // A server's list changed (list_changed, a reconnection): the catalog follows, or, refused, keeps serving what it had (logged).
  upstreams?.onChange(server => { updates.replace(async () => withUpstreams(local as AnyTool<GatewayApp>[]), `upstream ${server}`).catch(() => undefined) })
  app.decorate('openapiDocument', () => JSON.parse(documents.views(catalog.current).fullJson()) as Record<string, unknown>)

  await app.register(problemPlugin, {
    onToolRouteFailure: earlyFailureHook(config.metrics ? countEarlyFailure(metrics) : undefined, audit === undefined ? undefined : auditEarlyRefusal(audit, id => catalog.get(id))),
    challengeParams: config.jwt === undefined ? undefined : resourceMetadataParam,
  })
  await app.register(requestIdPlugin)
  // CORS first among the request hooks, so a browser can read the refusals that follow. Its
  // module loads only when it is configured.
  if (config.corsOrigins.length > 0) await app.register((await import('./http/cors.js')).corsPlugin, { config })
  await app.register(queryCredentialsPlugin)
  await app.register(openApiPlugin, { version: VERSION })
  // The document of the first set, before anything is served (after swagger's own onReady).
  app.addHook('onReady', async () => {
    // Until every set installed meanwhile has its document (a reload may land during start-up).
    let set
    do {
      set = catalog.current
      await documents.prepare(set)
    } while (set !== catalog.current)
    ready = true
  })
  if (config.metrics) await app.register(metricsPlugin, { metrics, openMetrics: options.tracing !== undefined })
  await app.register(healthRoutes, { catalog, upstreams })
  if (config.jwt !== undefined) await app.register(protectedResourceRoutes, { jwt: config.jwt })
  const traceCall = traced === undefined ? undefined : traced.faces.callTracer(traced.tracing)
  // Every face's calls enter and are finished here: one compiled set of approval rules, one
  // in-flight gauge, one audit trail, one log line per call, whichever face a call came through.
  const calls = new GatewayCalls({
    catalog,
    serialize: jsonWithin(config.maxResponseBytes),
    inFlight: config.metrics ? toolId => metrics.inFlight(toolId) : undefined,
    audit,
    approvalRule: config.approvalRules.length === 0 ? undefined : compileApprovalRules(config.approvalRules),
    logs: logsOf(config.logLevel),
  })
  // One authenticated scope for every face that calls or decides tools: one admission hook
  // (one pressure monitor, one failed-authentication throttle) and one rate limiter, so a
  // principal's budgets hold whichever face it uses. Health, metrics and the document's
  // public parts stay outside.
  await app.register(async function authenticated (scope) {
    // Before admission: the approvals page's sign-in cookie becomes a bearer token on the routes that take it.
    if (people.signIn !== undefined) await scope.register(approvalsSessionHook, { signIn: people.signIn })
    await scope.register(admissionPlugin, { config, onAuthFailure: config.metrics ? reason => { metrics.authFailure(reason) } : undefined })
    if (rateLimitingEnabled(config)) await scope.register(rateLimitPlugin, { config, redis })
    await scope.register(toolRoutes, { calls, facts, bodyLimit: config.bodyLimit, docsUi: config.docs, traceCall, documents })
    await scope.register(approvalRoutes, { catalog, sweepMs: 5_000, onPending: approvalSinks.onPending, recent: people.recent, pagePollMs: 2_000, ...(people.signIn === undefined ? {} : { signIn: people.signIn }) })
    await scope.register(mcpRoutes, {
      calls, facts, allowedOrigins: config.mcpAllowedOrigins, bodyLimit: config.bodyLimit, inputBounds: inputBoundsOf(config), traceCall,
      requestState: {
        // Replicas on one Redis share the sealing secret, so any of them opens any one's state.
        seal: sealSource(config.mcpStateSecret, redis === undefined ? undefined : candidate => sharedSecret(redis, `${config.redisPrefix}mcp:state-secret`, candidate)),
        approvalWaitMs: config.mcpApprovalWaitMs,
      },
    })
    await scope.register(intentRoutes, { calls, facts, traceCall })
    if (upstreams !== undefined) await scope.register(upstreamRoutes, { upstreams })
  })
  app.addHook('onClose', async () => {
    const stopped = people.webhooks?.close() ?? 0
    if (stopped > 0) app.log.warn({ webhookDeliveries: stopped }, 'shutting down: approval webhook deliveries under way are stopped')
    await catalog.shutdown(0)
  })
  return catalog
}

/** Traced, each duration keeps its (sampled) call's span as its exemplar; untraced, nothing more than counting. */
function metricsObserver (metrics: GatewayMetrics, traced: boolean): (record: CallRecord) => void {
  if (!traced) return record => { metrics.observe(record) }
  return record => { metrics.observe(record, exemplarOf(record.trace)) }
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
