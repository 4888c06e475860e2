import type { FastifyInstance, FastifyRequest } from 'fastify'
import { validatorCompiler, type ZodTypeProvider } from 'fastify-type-provider-zod'
import type { FastifySchemaCompiler } from 'fastify'
import { z } from 'zod'
import { SCOPES, type GatewayApp, type GatewayFacts } from '../src/core/app-context.js'
import { requireScope } from '../src/services/auth/index.js'
import { GatewayError, type AnyTool, type CallRecord, type ToolCatalog } from '../src/index.js'
import type { InFlight } from '../src/services/metrics/gateway-metrics.js'
import { effectsText, listingOf, summaryOf, ToolListingSchema } from '../src/services/tool-listing.js'
import { callerDocs } from './caller-docs.js'
import { CALL_STATUSES, CallHeaders, CallHeadersWithKey, CallQuery, DRY_RUN_TYPE, problemResponses, ProviderSpecs, SpecQuery } from './schemas.js'
import { specsOf } from '../src/services/llm-specs/formats.js'
import { nameMapsOf } from '../src/services/llm-specs/names.js'
import { disconnectSignalOf } from './disconnect.js'
import { gatewayAppOf, permitFor } from './gateway-app.js'
import { logsInfo } from './lazy-logger.js'
import { APPROVAL_ID_HEADER, ApprovalSchema, preferredWaitMs } from './approval-schemas.js'
import type { ApprovalRule } from '../src/index.js'
import { context } from '@opentelemetry/api'
import { AuditTrail } from '../src/services/audit/audit-trail.js'
import type { CallSpan } from '../src/services/tracing/call-span.js'
import type { CallTracer } from './tracing.js'

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
  readonly facts: GatewayFacts
  /** The in-flight gauge of a tool, bound once per route (absent: not counted). */
  readonly inFlight?: (toolId: string) => InFlight
  /** Largest tool response body; a larger output is the tool's invalid output (502). */
  readonly maxResponseBytes: number
  /** Largest request body, set on each tool route so a host app's own limit does not apply. */
  readonly bodyLimit: number
  /** The operator's approval rules (absent: none). */
  readonly approvalRule?: (principalId: string, toolId: string) => ApprovalRule | undefined
  /** Serve the Swagger UI at /docs (the document at /openapi.json is always served, per caller). */
  readonly docsUi?: boolean
  /** Opens each call's span when tracing is on (absent: no span, no context, no cost). */
  readonly traceCall?: CallTracer
  /** The audit trail, when `AUDIT_LOG` is set. */
  readonly audit?: AuditTrail
}

const SECURITY: Array<Record<string, string[]>> = [{ apiKey: [] }, { bearer: [] }]

/**
 * The tool surface: `GET /tools`, `GET /tools/{id}` and one `POST /tools/{id}` operation per
 * tool, registered inside the gateway's authenticated scope (`registerGateway`); the handlers
 * translate HTTP to `invoke` and back and add no tool semantics.
 */
export async function toolRoutes (parent: FastifyInstance, options: ToolRoutesOptions): Promise<void> {
  const app = parent.withTypeProvider<ZodTypeProvider>()
  const { catalog, facts, traceCall, audit } = options
  const timeout = catalog.options.defaultTimeoutMs
  // Tool calls take JSON only: anything else is 415, not a string handed to the input schema.
  app.removeContentTypeParser(['text/plain'])
  const serialize = jsonWithin(options.maxResponseBytes)

  const appOf = (request: FastifyRequest): GatewayApp => gatewayAppOf(request, facts)

  // Built at start-up: two ids on one provider name stop the gateway here.
  const names = nameMapsOf(catalog.tools)

  /** What `GET /tools` lists for this request: active for its app, and permitted. */
  const visibleTools = (request: FastifyRequest): AnyTool<GatewayApp>[] =>
    catalog.active(appOf(request)).filter(tool => app.isPermitted(request.principal.id, tool.id))

  // The document and its UI, per caller, behind this scope's authentication.
  await app.register(callerDocs, { toolIds: catalog.ids(), visibleToolIds: request => visibleTools(request).map(tool => tool.id), ui: options.docsUi ?? true })

  app.get('/tools', {
    schema: {
      operationId: 'listTools', tags: ['gateway'], summary: 'List the tools you may call',
      description: 'Every tool active for this caller, with its effects, flags and JSON Schemas. With `format`, the same tools as the `tools` field of that provider\'s request body.',
      security: SECURITY, querystring: SpecQuery, response: { 200: z.union([z.object({ tools: z.array(ToolListingSchema) }), ProviderSpecs]), ...problemResponses([400, 401, 403]) },
    },
  }, async request => {
    requireScope(request.principal, SCOPES.read)
    const visible = visibleTools(request)
    const { format, strict } = request.query
    if (format !== undefined) return specsOf(format, visible, { defaultTimeoutMs: timeout, strict: strict === true, names: names.get(format)! })
    return { tools: visible.map(tool => listingOf(tool, timeout)) }
  })

  app.get('/tools/:id', {
    schema: {
      operationId: 'getTool', tags: ['gateway'], summary: 'Describe one tool', security: SECURITY,
      params: z.object({ id: z.string().max(64) }),
      headers: CallHeaders.pick({ 'x-session-id': true }),
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
    const inFlight = options.inFlight?.(tool.id)
    app.post(`/tools/${tool.id}`, {
      config: { toolId: tool.id },
      bodyLimit: options.bodyLimit,
      schema: { ...operationOf(tool, timeout), querystring: CallQuery, headers: tool.requiresIdempotencyKey === true ? CallHeadersWithKey : CallHeaders },
      validatorCompiler: callValidator as FastifySchemaCompiler<unknown>,
      // parseOutput already validated the value: serialize, do not validate twice.
      serializerCompiler: () => data => JSON.stringify(data),
    }, async (request, reply) => {
      const { principal, query } = request
      requireScope(principal, SCOPES.call)
      const gatewayApp = appOf(request)
      const waitMs = preferredWaitMs(request.headers.prefer)
      const span = traceCall?.(tool, request)
      const approvalId = single(request.headers[APPROVAL_ID_HEADER])
      let result
      inFlight?.inc()
      try {
        const bind = {
          app: gatewayApp,
          execution: { signal: disconnectSignalOf(reply) },
          domain: gatewayApp.domain,
          idempotencyScope: principal.id,
          mode: query.mode,
          isPermitted: permitFor(app, principal.id),
          onRecord: (record: CallRecord) => { settled(request, record, span, audit, approvalId) },
          serialize,
          requester: principal.id,
          approvalRule: ruleFor(principal.id),
          trace: span?.headers,
        }
        const call = {
          toolId: tool.id, input: request.body, dryRun: query.dryRun, escalate: query.escalate, idempotencyKey: single(request.headers['idempotency-key']),
          approvalId, waitForApprovalMs: waitMs,
        }
        // Traced, the call runs with its span active, so what the tool does joins the trace.
        result = await (span === undefined ? catalog.invokeWith(bind, call) : context.with(span.context, () => catalog.invokeWith(bind, call)))
      } finally {
        inFlight?.dec()
      }
      if (result.replayed) void reply.header('Idempotent-Replayed', 'true')
      if (waitMs !== undefined && (result.approval !== undefined || result.waitedForApproval === true)) {
        void reply.header('Preference-Applied', `wait=${Math.min(waitMs, catalog.approvals.maxWaitMs) / 1000}`)
      }
      if (result.approval !== undefined) {
        return reply.code(202).header('Location', `${app.prefix}/approvals/${result.approval.id}`).type('application/json; charset=utf-8').send(result.body)
      }
      return reply.code(200).type(query.dryRun === true ? DRY_RUN_TYPE : 'application/json; charset=utf-8').send(result.body)
    })
  }


  function ruleFor (principalId: string): ((tool: AnyTool) => ApprovalRule | undefined) | undefined {
    const approvalRule = options.approvalRule
    return approvalRule === undefined ? undefined : tool => approvalRule(principalId, tool.id)
  }
}

function single (value: string | string[] | undefined): string | undefined {
  return Array.isArray(value) ? value[0] : value
}

/** Where a call is finished on the HTTP face: its span closed, its audit line, its log line. */
function settled (request: FastifyRequest, record: CallRecord, span: CallSpan | undefined, audit: AuditTrail | undefined, approvalId: string | undefined): void {
  span?.end(record, approvalId)
  if (audit !== undefined && AuditTrail.covers(record)) {
    audit.call(record, { principal: request.principal.id, requestId: request.id, traceId: span?.traceId, input: request.body, ...(approvalId === undefined ? {} : { approvalId }) })
  }
  logCall(request, record)
}

/** One line per call, with the request id from the request's logger; inputs only at debug. */
function logCall (request: FastifyRequest, record: CallRecord): void {
  request.callRecord = record
  if (record.status < 500 && !logsInfo(request.log.level)) return
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


/** JSON for the response body, inside the pipeline: circular or oversized output is a 502. */
export function jsonWithin (maxBytes: number): (value: unknown) => string {
  return value => {
    const body = JSON.stringify(value === undefined ? null : value)
    // A UTF-16 length is a lower bound of the UTF-8 size: check the cheap bound first.
    if (body.length > maxBytes || (body.length * 3 > maxBytes && Buffer.byteLength(body) > maxBytes)) {
      throw new RangeError(`the output is larger than the ${maxBytes}-byte response limit`)
    }
    return body
  }
}
const EMPTY_QUERY = Object.freeze({})
const passThrough = (data: unknown): { value: unknown } => ({ value: data })
const headersAsSent = (): boolean => true

/**
 * The body is the tool's raw input: the pipeline validates it, after authentication and the
 * permission checks. Headers are read by name where they are used (validating the whole
 * header object with zod would cost every call microseconds); the schema still documents them.
 */
const callValidator: FastifySchemaCompiler<z.ZodType> = routeSchema => {
  if (routeSchema.httpPart === 'body') return passThrough
  // No `value` for headers: Fastify would then replace request.headers with a copy, and every
  // later read of it would copy all headers again.
  if (routeSchema.httpPart === 'headers') return headersAsSent
  const validate = validatorCompiler(routeSchema) as (data: unknown) => { value?: unknown, error?: Error }
  return data => (isEmpty(data) ? { value: EMPTY_QUERY } : validate(data))
}

function isEmpty (data: unknown): boolean {
  for (const _ in data as object) return false
  return true
}

/**
 * The 200 of a tool call: its output, or for a dry run what the call would do, under its own
 * media type so that a client (and a validator) never reads a proposal as the tool's output.
 * Without `resolve` a dry run answers the parsed input.
 */
function okResponseOf (tool: AnyTool): { description: string, content: Record<string, { schema: AnyTool['inputSchema'] }> } {
  return {
    description: `The tool's output (application/json). With \`dryRun=true\`: what the call would do, nothing executed (${DRY_RUN_TYPE}).`,
    content: {
      'application/json': { schema: tool.outputSchema },
      [DRY_RUN_TYPE]: { schema: tool.resolve === undefined ? tool.inputSchema : ANY_PROPOSAL },
    },
  }
}

const ANY_PROPOSAL = z.unknown().describe('What the call would do, as the tool\'s resolve describes it')

/** The OpenAPI operation of one tool, derived from its declaration alone. */
function operationOf (tool: AnyTool, defaultTimeoutMs: number): { body: AnyTool['inputSchema'], response: Record<number, unknown> } & Record<string, unknown> {
  const timeoutMs = tool.timeoutMs ?? defaultTimeoutMs
  const flags = [tool.isReadOnly ? 'read-only' : 'changes state', tool.isConcurrencySafe ? 'concurrency-safe' : 'runs exclusively in its session']
  return {
    operationId: tool.id,
    summary: summaryOf(tool),
    description: `${tool.description}\n\n**${effectsText(tool)}** ${flags.join(', ')}; timeout ${timeoutMs === Infinity ? 'none (interactive)' : `${timeoutMs} ms`}.`,
    tags: [tool.kind],
    security: SECURITY,
    body: tool.inputSchema,
    response: { 200: okResponseOf(tool), 202: ApprovalSchema.describe('Nothing ran: the call waits for a person\'s approval (`Location`: the approval). Re-send it with `Approval-Id` once approved.'), ...problemResponses(CALL_STATUSES) },
    'x-effects': [...tool.effects],
    'x-read-only': tool.isReadOnly,
    'x-concurrency-safe': tool.isConcurrencySafe,
    'x-timeout-ms': timeoutMs === Infinity ? null : timeoutMs,
  }
}
