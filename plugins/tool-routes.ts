import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify'
import { validatorCompiler, type ZodTypeProvider } from 'fastify-type-provider-zod'
import type { FastifySchemaCompiler } from 'fastify'
import { z } from 'zod'
import { SCOPES, type GatewayApp, type GatewayFacts } from '../src/app-context.js'
import { requireScope } from '../src/auth/index.js'
import { GatewayError, type AnyTool, type CallRecord, type ToolCatalog } from '../src/index.js'
import { effectsText, listingOf, summaryOf, ToolListingSchema } from '../src/tool-listing.js'
import { authPlugin, type AuthOptions } from './auth.js'
import { CALL_STATUSES, CallQuery, problemResponses, SessionHeaders } from './schemas.js'

declare module 'fastify' {
  interface FastifyRequest {
    /** The core's record of this request's tool call, once the pipeline ran. */
    callRecord: CallRecord | null
  }
  interface FastifyContextConfig {
    /** Set on the `POST /tools/{id}` route of each tool. */
    toolId?: string
  }
}

export interface ToolRoutesOptions {
  readonly catalog: ToolCatalog<GatewayApp>
  readonly auth: AuthOptions
  readonly facts: GatewayFacts
}

const SECURITY: Array<Record<string, string[]>> = [{ apiKey: [] }, { bearer: [] }]

/**
 * The tool surface: `GET /tools`, `GET /tools/{id}` and one `POST /tools/{id}` operation per
 * tool. This scope owns authentication; the handlers translate HTTP to `invoke` and back and
 * add no tool semantics.
 */
export async function toolRoutes (parent: FastifyInstance, options: ToolRoutesOptions): Promise<void> {
  const app = parent.withTypeProvider<ZodTypeProvider>()
  const { catalog, facts } = options
  const timeout = catalog.options.defaultTimeoutMs
  // Tool calls take JSON only: anything else is 415, not a string handed to the input schema.
  app.removeContentTypeParser(['text/plain'])
  await app.register(authPlugin, options.auth)

  const appOf = (request: FastifyRequest): GatewayApp => {
    const session = request.headers['x-session-id']
    return {
      principal: request.principal,
      requestId: request.id,
      // Sessions are per principal: one caller cannot queue behind another's session.
      domain: typeof session === 'string' ? `${request.principal.id}/${session}` : request.principal.id,
      log: request.log,
      gateway: facts,
    }
  }

  app.get('/tools', {
    schema: {
      operationId: 'listTools', tags: ['gateway'], summary: 'List the tools you may call',
      description: 'Every tool active for this caller, with its effects, flags and JSON Schemas.',
      security: SECURITY, response: { 200: z.object({ tools: z.array(ToolListingSchema) }), ...problemResponses([401, 403]) },
    },
  }, async request => {
    requireScope(request.principal, SCOPES.read)
    const visible = catalog.active(appOf(request)).filter(tool => app.isPermitted(request.principal.id, tool.id))
    return { tools: visible.map(tool => listingOf(tool, timeout)) }
  })

  app.get('/tools/:id', {
    schema: {
      operationId: 'getTool', tags: ['gateway'], summary: 'Describe one tool', security: SECURITY,
      params: z.object({ id: z.string().max(64) }),
      response: { 200: ToolListingSchema, ...problemResponses([401, 403, 404]) },
    },
  }, async request => {
    requireScope(request.principal, SCOPES.read)
    const tool = catalog.active(appOf(request)).find(t => t.id === request.params.id)
    if (tool === undefined || !app.isPermitted(request.principal.id, tool.id)) {
      throw new GatewayError('TOOLGATE_NOT_FOUND', `no tool "${request.params.id}"`)
    }
    return listingOf(tool, timeout)
  })

  // Unknown ids: authenticated first (step 1), then the same 404 an inactive tool gets (step 2).
  app.post('/tools/:id', { schema: { hide: true } }, async request => {
    throw new GatewayError('TOOLGATE_NOT_FOUND', `no tool "${(request.params as { id: string }).id}"`)
  })

  for (const tool of catalog.tools) {
    app.post(`/tools/${tool.id}`, {
      config: { toolId: tool.id },
      schema: { ...operationOf(tool, timeout), querystring: CallQuery, headers: SessionHeaders },
      validatorCompiler: bodyPassThrough as FastifySchemaCompiler<unknown>,
      // parseOutput already validated the value: serialize, do not validate twice.
      serializerCompiler: () => data => JSON.stringify(data),
    }, async (request, reply) => {
      requireScope(request.principal, SCOPES.call)
      const gatewayApp = appOf(request)
      const invoker = catalog.bind({
        app: gatewayApp,
        execution: { signal: abortOnDisconnect(reply) },
        domain: gatewayApp.domain,
        mode: request.query.mode,
        escalationApproved: request.principal.scopes.includes(SCOPES.escalate),
        isPermitted: t => app.isPermitted(request.principal.id, t.id),
        onRecord: record => { request.callRecord = record; logCall(request, record) },
      })
      const { value } = await invoker.invoke({ toolId: tool.id, input: request.body, dryRun: request.query.dryRun, escalate: request.query.escalate })
      return reply.code(200).send(value === undefined ? null : value)
    })
  }
}

/** One line per call, with the request id from the request's logger; inputs only at debug. */
function logCall (request: FastifyRequest, record: CallRecord): void {
  const line = {
    tool: record.toolId, outcome: record.outcome, status: record.status, code: record.code, callId: record.callId,
    durationMs: Math.round(record.durationMs * 100) / 100, queueMs: Math.round(record.queueMs * 100) / 100,
    principal: request.principal.id, domain: record.domain, effects: record.effectsLabel,
    mutated: record.mutatedResources.length === 0 ? undefined : record.mutatedResources,
  }
  if (record.status >= 500) request.log.error({ ...line, err: record.failure }, 'tool call failed')
  else request.log.info(line, 'tool call')
  if (request.log.level === 'debug' || request.log.level === 'trace') request.log.debug({ callId: record.callId, input: request.body, debugSteps: record.debugSteps }, 'tool call input')
}

/** The body is the tool's raw input: the pipeline validates it, after authorization steps. */
const bodyPassThrough: FastifySchemaCompiler<z.ZodType> = routeSchema => {
  if (routeSchema.httpPart === 'body') return data => ({ value: data })
  return validatorCompiler(routeSchema)
}

/** A client that goes away aborts the tool's signal; the call is recorded as cancelled. */
function abortOnDisconnect (reply: FastifyReply): AbortSignal {
  const controller = new AbortController()
  reply.raw.once('close', () => { if (!reply.raw.writableFinished) controller.abort() })
  return controller.signal
}

/** The OpenAPI operation of one tool, derived from its declaration alone. */
function operationOf (tool: AnyTool, defaultTimeoutMs: number): { body: z.ZodType, response: Record<number, unknown> } & Record<string, unknown> {
  const timeoutMs = tool.timeoutMs ?? defaultTimeoutMs
  const flags = [tool.isReadOnly ? 'read-only' : 'changes state', tool.isConcurrencySafe ? 'concurrency-safe' : 'runs exclusively in its session']
  return {
    operationId: tool.id,
    summary: summaryOf(tool),
    description: `${tool.description}\n\n**${effectsText(tool)}** ${flags.join(', ')}; timeout ${timeoutMs === Infinity ? 'none (interactive)' : `${timeoutMs} ms`}.`,
    tags: [tool.kind],
    security: SECURITY,
    body: tool.inputSchema,
    response: { 200: tool.outputSchema, ...problemResponses(CALL_STATUSES) },
    'x-effects': [...tool.effects],
    'x-read-only': tool.isReadOnly,
    'x-concurrency-safe': tool.isConcurrencySafe,
    'x-timeout-ms': timeoutMs === Infinity ? null : timeoutMs,
  }
}
