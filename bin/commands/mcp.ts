import type { CancelSignal } from '../../src/core/abort.js'
import type { Elicit } from '../../src/core/elicitation.js'
import { SCOPES, type GatewayApp, type GatewayFacts, type Principal } from '../../src/core/app-context.js'
import { newId } from '../../src/core/ids.js'
import { defineToolCatalog, MemoryIdempotencyStore, type AnyTool } from '../../src/index.js'
import { createPermissionRules } from '../../src/services/auth/index.js'
import { McpProtocol, type McpCaller } from '../../src/services/mcp/protocol.js'
import { serveStdio } from '../../src/services/mcp/stdio.js'
import { ApprovalContinuations } from '../../src/services/mcp/approval-continuation.js'
import { CallQuestions, QUESTION_TTL_MS } from '../../src/services/mcp/questions.js'
import { sealSource } from '../../src/services/mcp/request-state.js'
import { approvalOptionsOf, logApprovalEvent } from '../../src/services/approvals/options.js'
import { compileApprovalRules } from '../../src/services/approvals/rules.js'
import { createRedisClient, whenReady } from '../../src/services/redis/client.js'
import { VERSION } from '../../src/services/version.js'
import { inputBoundsOf } from '../../src/services/config.js'
import { jsonWithin } from '../../src/services/calls/json-within.js'
import { GatewayCalls, logsOf } from '../../src/services/calls/gateway-calls.js'
import { openAuditTrail } from '../../src/services/audit/open.js'
import { problemOf } from '../../plugins/http/problem.js'
import { bundleView, catalogView, visibleOf, type ToolView } from '../../src/services/bundles/tool-view.js'
import type { Upstreams } from '../../src/services/upstreams/upstreams.js'
import { EXIT, UsageError, type Command } from '../command.js'
import { configAndTools } from './load.js'

/** Whoever launched the process: a desktop host acting for its user. Rules may still name it. */
const LOCAL: Principal = { id: 'stdio', scopes: [SCOPES.read, SCOPES.call], via: 'anonymous' }
const MCP_TRANSPORT = 'mcp-stdio'

export const mcp: Command = {
  help: `usage: toolgate mcp [--upstreams FILE] [TOOLS_DIR]

Serve every tool in TOOLS_DIR (default: the TOOLS_DIR setting, else ./tools) as an MCP server
over stdio, for desktop hosts that launch their servers as processes. The same pipeline as
serve: validation, authorize, idempotency, scheduling, timeouts, parseOutput. The caller is the
principal "stdio" (scopes tools:read and tools:call; permission rules may name it). Logs go to
stderr; stdout carries MCP messages only. The process ends when stdin closes.

  --upstreams FILE   also serve the tools of the MCP servers and HTTP services in FILE
                     (UPSTREAMS_FILE), as toolgate serve does; servers it starts are stopped
                     when this process ends
  --bundle NAME      serve only the bundle NAME of the upstreams file, under its names`,
  options: { upstreams: { type: 'string' }, bundle: { type: 'string' } },
  async run (args) {
    // Info until the settings are read (an upstream may speak before), then LOG_LEVEL.
    let level = 'info'
    const log = stderrLogger(() => level)
    const { config, local, tools, upstreams } = await configAndTools(args, log)
    level = config.logLevel
    const view = viewOf(args.values.bundle, upstreams, tools)
    // With REDIS_URL, approvals live where the HTTP gateways' approvers decide them.
    const redis = config.redisUrl === undefined ? undefined : createRedisClient(config.redisUrl, { down: error => { log.warn({ err: String(error) }, 'redis unreachable') } })
    if (redis !== undefined && !await whenReady(redis, 2_000)) log.warn({}, 'redis not reachable at start-up; continuing')
    const catalog = defineToolCatalog<GatewayApp>(tools as AnyTool<GatewayApp>[], {
      core: { defaultTimeoutMs: config.toolTimeoutMs, maxQueuePerDomain: config.maxQueuePerSession, queueTimeoutMs: config.queueTimeoutMs, inputBounds: inputBoundsOf(config) },
      idempotency: { store: new MemoryIdempotencyStore({ maxEntries: config.idempotencyMaxEntries }), ttlMs: config.idempotencyTtlMs },
      approvals: {
        ...approvalOptionsOf(config, redis, event => { logApprovalEvent(log, event) }),
        // Without a store shared with a gateway that serves the approvals page, an approval asked
        // here lives in this process, where no one can see or decide it.
        ...(redis === undefined ? { undecidable: 'over stdio without REDIS_URL nobody can decide it: set REDIS_URL to the Redis of a gateway that serves the approvals page, whose approvers then decide it' } : {}),
      },
    })
    // An upstream's list changed: the catalog follows (a refused change keeps what serves, logged).
    upstreams?.onChange(server => {
      try {
        catalog.replace([...local, ...upstreams.tools()])
      } catch (error) {
        log.error({ upstream: server, err: String(error) }, 'the tools of this upstream changed, but they were refused; the tools serving stay')
      }
    })
    const isPermitted = createPermissionRules(config.rules)
    const permitted = (tool: AnyTool): boolean => isPermitted(LOCAL.id, tool.id)
    const facts: GatewayFacts = { version: VERSION, startedAt: Date.now(), toolIds: () => catalog.ids(), inFlight: () => catalog.inFlight }
    const audit = await openAuditTrail(config, log)
    // Finished as on every face: the operator's approval rules, the audit trail, a log line per call.
    const calls = new GatewayCalls({
      catalog,
      serialize: jsonWithin(config.maxResponseBytes),
      audit,
      approvalRule: config.approvalRules.length === 0 ? undefined : compileApprovalRules(config.approvalRules),
      logs: logsOf(config.logLevel),
    })
    // Its states come back to this process only: a secret of its own, never the replicas' shared one.
    const seal = sealSource(config.mcpStateSecret)
    const protocol = new McpProtocol({ name: 'toolgate', version: VERSION, defaultTimeoutMs: config.toolTimeoutMs, features: upstreams?.features.any }, new ApprovalContinuations(catalog.approvals, seal, config.mcpApprovalWaitMs), new CallQuestions(seal, QUESTION_TTL_MS))

    const callerOf = (cancelled: CancelSignal | undefined, notify: (json: string) => void, elicit: Elicit | undefined): McpCaller => {
      const app: GatewayApp = { principal: LOCAL, requestId: newId(), domain: LOCAL.id, log, gateway: facts }
      const origin = { app, source: LOCAL.id, transport: MCP_TRANSPORT, bundle: view.bundle?.name, contentBlocks: true, isPermitted: permitted }
      return {
        principalId: LOCAL.id,
        tools: () => visibleOf(view, catalog.current, app, permitted),
        all: () => view.all(catalog.current),
        discovery: view.bundle?.discovery ?? config.mcpDiscovery === 'on',
        get: name => view.get(catalog.current, name),
        invoke: async (toolId, input, call) => await calls.call(origin, { ...call, toolId, input, signal: cancelled }),
        problemOf: error => problemOf(error, app.requestId),
        notify,
        elicit,
        get features () {
          // A bundle is a set of tools: the upstreams' resources and prompts are served without --bundle.
          if (view.bundle !== undefined) return undefined
          return upstreams?.features.forCaller(LOCAL, permitted, async ({ tool, input }) => await calls.call(origin, { toolId: tool.id, input, signal: cancelled }, tool), error => problemOf(error, app.requestId))
        },
      }
    }
    await serveStdio({
      protocol, input: process.stdin, output: process.stdout, callerOf, maxBytes: config.bodyLimit, inputBounds: inputBoundsOf(config),
      onError: error => { log.error({ err: String(error) }, 'mcp request failed') },
    })
    await catalog.shutdown(config.shutdownGraceMs)
    await audit?.close()
    await upstreams?.close()
    redis?.disconnect()
    return EXIT.ok
  },
}

/**
 * The tools this server serves: every tool, or the bundle `name` of the upstreams file
 * (checked over the tools as `serve` checks it; one the stdio principal may not use is refused).
 */
function viewOf (name: string | boolean | undefined, upstreams: Upstreams | undefined, tools: readonly AnyTool[]): ToolView<GatewayApp> {
  if (typeof name !== 'string') return catalogView()
  if (upstreams === undefined) throw new UsageError('--bundle needs an upstreams file (--upstreams or UPSTREAMS_FILE): bundles are declared there')
  const bundles = upstreams.bundles.current
  bundles.check(tools, upstreams.complete)
  const bundle = bundles.get(name)
  if (bundle === undefined) throw new UsageError(`no bundle "${name}" in ${bundles.where}${bundles.size === 0 ? '' : ` (it declares ${bundles.list().map(b => b.name).join(', ')})`}`)
  if (!bundle.mayUse(LOCAL)) throw new UsageError(`bundle "${name}" is not open to the stdio principal (its scopes or allow refuse it)`)
  return bundleView(bundle)
}

const LEVELS = ['trace', 'debug', 'info', 'warn', 'error', 'fatal']

/** JSON lines on stderr (stdout belongs to the protocol), at `level()` and above, as pino's levels rank. */
function stderrLogger (level: () => string): GatewayApp['log'] {
  const line = (name: string) => (obj: object, msg?: string): void => {
    const floor = LEVELS.indexOf(level())
    if (floor === -1 || LEVELS.indexOf(name) < floor) return
    process.stderr.write(JSON.stringify({ level: name, time: Date.now(), ...obj, msg }) + '\n')
  }
  return { info: line('info'), warn: line('warn'), error: line('error'), debug: line('debug') }
}
