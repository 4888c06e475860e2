import type { FastifyInstance } from 'fastify'
import { serializerCompiler, validatorCompiler } from 'fastify-type-provider-zod'
import type { GatewayApp } from '../src/core/app-context.js'
import type { AnyTool, ToolCatalog, ToolDeclaration } from '../src/index.js'
import type { AuditTrail } from '../src/services/audit/audit-trail.js'
import { inputBoundsOf, type Config } from '../src/services/config.js'
import { openGatewayServices } from '../src/services/gateway/services.js'
import { CatalogUpdates, ToolReplacementError, type ToolReplacement } from '../src/services/loading/catalog-updates.js'
import { loadToolsFromDir } from '../src/services/loading/loader.js'
import { sealSource } from '../src/services/mcp/request-state.js'
import type { GatewayMetrics } from '../src/services/metrics/gateway-metrics.js'
import { sharedSecret } from '../src/services/redis/shared-secret.js'
import type { Tracing } from '../src/services/tracing/types.js'
import type { Upstreams } from '../src/services/upstreams/upstreams.js'
import { VERSION } from '../src/services/version.js'
import { admissionPlugin } from './access/admission.js'
import { protectedResourceRoutes, resourceMetadataParam } from './access/protected-resource.js'
import { queryCredentialsPlugin } from './access/query-credentials.js'
import { rateLimitingEnabled, rateLimitPlugin } from './access/rate-limit.js'
import { approvalRoutes } from './approvals/routes.js'
import { approvalsSessionHook } from './approvals/sign-in.js'
import { healthRoutes } from './http/health.js'
import { boundJsonBodies } from './http/json-body.js'
import { problemPlugin, type ProblemOptions } from './http/problem.js'
import { requestIdPlugin } from './http/request-id.js'
import { mcpRoutes } from './mcp/routes.js'
import { auditEarlyRefusal } from './observability/audit.js'
import { countEarlyFailure, metricsPlugin } from './observability/metrics.js'
import { openApiPlugin } from './openapi/openapi.js'
import { ToolDocuments } from './openapi/tool-document.js'
import { approvableBy } from './openapi/tool-operation.js'
import { intentRoutes } from './tools/intents.js'
import { toolRoutes } from './tools/routes.js'
import { upstreamJwksRoute } from './tools/upstream-jwks.js'
import { connectionRoutes } from './connections/routes.js'
import { limitRoutes } from './limits/routes.js'
import { bundleRoutes } from './bundles/routes.js'
import { consoleCatalogRoutes } from './console/catalog.js'
import { consolePageRoutes } from './console/page.js'
import { consoleRoutes } from './console/routes.js'
import { noBundles } from '../src/services/bundles/live-bundles.js'
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
  // First, so that the HTTP server span covers every route and hook registered after it.
  // The Fastify instrumentation (and the SDK behind it) loads only when tracing is on.
  const traced = options.tracing === undefined ? undefined : { tracing: options.tracing, faces: await import('./observability/tracing.js') }
  if (traced !== undefined) await traced.faces.registerHttpTracing(app, traced.tracing)
  const services = await openGatewayServices({ config, tools, log: app.log, upstreams, tracing: options.tracing, prefix: app.prefix })
  // Closed when the app closes, or now when registration fails half-way (buildApp closes the app).
  app.addHook('onClose', async () => { await services.close() })
  const { catalog, facts, calls, metrics, audit, redis, people } = services
  const documents = new ToolDocuments({ gateway: () => app.swagger() as unknown as Record<string, unknown>, version: VERSION, prefix: app.prefix, defaultTimeoutMs: config.toolTimeoutMs, approvable: approvableBy(config.approvalRules), limits: tool => catalog.limits.of(tool) })

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
  })
  let ready = false
  const updates = new CatalogUpdates({
    catalog,
    // Before the app is ready its document cannot be generated: onReady generates the set serving then.
    prepare: async set => {
      // The operator's budgets read fields of the tools they cover: a reloaded tool without them is refused, naming both.
      upstreams?.limits.check(set.tools)
      if (ready) await documents.prepare(set)
    },
    log: app.log,
    onOutcome: outcome => { metrics.catalogReplaced(outcome) },
  })
  const withUpstreams = (given: readonly AnyTool<GatewayApp>[]): AnyTool<GatewayApp>[] => upstreams === undefined ? [...given] : [...given, ...upstreams.tools()]
  app.decorate('replaceTools', async (next: Parameters<FastifyInstance['replaceTools']>[0]) => {
    const given = [...next] as AnyTool<GatewayApp>[]
    return await updates.replace(async () => checkedBundles(withUpstreams(given)), 'api', () => { local = given })
  })
  /** The tools of a replacement the operator asked for, refused (naming the field) when a bundle cannot serve over them. */
  const checkedBundles = (next: AnyTool<GatewayApp>[], bundles = upstreams?.bundles.current): AnyTool<GatewayApp>[] => {
    for (const warning of bundles?.check(next, upstreams!.complete) ?? []) app.log.warn({ bundle: warning.bundle }, `${warning.problem} (yet: an upstream is down)`)
    return next
  }
  const { toolsDir } = options
  app.decorate('reloadTools', async () => {
    // The tools folder, every OpenAPI document and the file's bundles are read again; a gateway given its tools, with no upstreams file, has nothing to reload.
    if (toolsDir === undefined && upstreams === undefined) throw new ToolReplacementError({ version: catalog.current.version, tools: catalog.current.tools.length }, new Error('this gateway was given its tools, not a tools folder: use replaceTools'))
    let loaded = local as AnyTool<GatewayApp>[]
    let commit = (): void => {}
    return await updates.replace(async () => {
      if (toolsDir !== undefined) loaded = await loadToolsFromDir(toolsDir) as AnyTool<GatewayApp>[]
      if (upstreams === undefined) return [...loaded]
      const reread = await upstreams.reload()
      // The file's bundles are read again too, and must hold over the tools the reload would serve.
      const bundles = upstreams.bundles.read()
      commit = () => { reread.commit(); upstreams.bundles.install(bundles) }
      return checkedBundles([...loaded, ...reread.tools], bundles)
    }, toolsDir ?? 'the upstreams file', () => {
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
  const jwks = upstreams?.credentials?.jwks()
  if (jwks !== undefined) await app.register(upstreamJwksRoute, { jwks })
  const traceCall = traced === undefined ? undefined : traced.faces.callTracer(traced.tracing)
  const bundles = upstreams?.bundles ?? noBundles()
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
    await scope.register(approvalRoutes, { catalog, sweepMs: 5_000, onPending: services.onPendingApprovals, recent: people.recent, pagePollMs: 2_000, ...(people.signIn === undefined ? {} : { signIn: people.signIn }) })
    await scope.register(mcpRoutes, {
      calls, facts, allowedOrigins: config.mcpAllowedOrigins, bodyLimit: config.bodyLimit, inputBounds: inputBoundsOf(config), traceCall,
      requestState: {
        // Replicas on one Redis share the sealing secret, so any of them opens any one's state.
        seal: sealSource(config.mcpStateSecret, redis === undefined ? undefined : candidate => sharedSecret(redis, `${config.redisPrefix}mcp:state-secret`, candidate)),
        approvalWaitMs: config.mcpApprovalWaitMs,
      },
      features: upstreams?.features,
      bundles,
      discovery: config.mcpDiscovery === 'on',
    })
    await scope.register(bundleRoutes, { bundles, calls, facts, bodyLimit: config.bodyLimit, traceCall, documents, docsUi: config.docs })
    await scope.register(intentRoutes, { calls, facts, traceCall })
    await scope.register(limitRoutes, { catalog, facts })
    await scope.register(consoleRoutes, { recent: services.recent, history: services.history, upstreams, audit: services.auditView })
    await scope.register(consoleCatalogRoutes, { catalog, upstreams, approvalRules: config.approvalRules, defaultTimeoutMs: config.toolTimeoutMs })
    await scope.register(consolePageRoutes, { oidcSignIn: people.signIn !== undefined, version: VERSION })
    if (upstreams !== undefined) await scope.register(upstreamRoutes, { upstreams })
    const links = upstreams?.credentials?.links() ?? []
    if (links.length > 0) await scope.register(connectionRoutes, { links, oidcSignIn: people.signIn !== undefined })
  })
  return catalog
}

type EarlyFailureHook = NonNullable<ProblemOptions['onToolRouteFailure']>

/** Metrics and audit both hear of tool-route failures before the pipeline; either may be off. */
function earlyFailureHook (count: EarlyFailureHook | undefined, audit: EarlyFailureHook | undefined): EarlyFailureHook | undefined {
  if (count === undefined || audit === undefined) return count ?? audit
  return (...args) => { count(...args); audit(...args) }
}
