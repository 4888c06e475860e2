import type { FastifyInstance, FastifyRequest } from 'fastify'
import { validatorCompiler, type ZodTypeProvider } from 'fastify-type-provider-zod'
import type { FastifySchemaCompiler } from 'fastify'
import { z } from 'zod'
import { SCOPES, type GatewayApp, type GatewayFacts } from '../src/core/app-context.js'
import { requireScope } from '../src/services/auth/index.js'
import { GatewayError, type AnyTool, type CallRecord, type ToolCatalog, type ToolSet } from '../src/index.js'
import type { InFlight } from '../src/services/metrics/gateway-metrics.js'
import { listingOf, ToolListingSchema } from '../src/services/tool-listing.js'
import { callerDocs } from './caller-docs.js'
import { CallHeaders, CallQuery, DRY_RUN_TYPE, problemResponses, ProviderSpecs, SpecQuery } from './schemas.js'
import { specsOf } from '../src/services/llm-specs/formats.js'
import { nameMapsFor } from '../src/services/llm-specs/names.js'
import { disconnectSignalOf } from './disconnect.js'
import { gatewayAppOf, permitFor } from './gateway-app.js'
import { logsInfo } from './lazy-logger.js'
import { APPROVAL_ID_HEADER, preferredWaitMs } from './approval-schemas.js'
import type { ApprovalRule } from '../src/index.js'
import { context } from '@opentelemetry/api'
import { AuditTrail } from '../src/services/audit/audit-trail.js'
import type { CallSpan } from '../src/services/tracing/call-span.js'
import type { CallTracer } from './tracing.js'
import type { ToolDocuments } from './tool-document.js'
import { SECURITY } from './tool-operation.js'
import './tool-call-route.js'

declare module 'fastify' {
  interface FastifyRequest {
    /** The core's record of this request's tool call, once the pipeline ran. */
    callRecord: CallRecord | null
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
  /** The OpenAPI document of each catalog version, for `/openapi.json` and `/docs`. */
  readonly documents: ToolDocuments
}

/**
 * The tool surface: `GET /tools`, `GET /tools/{id}` and `POST /tools/{id}`, registered inside
 * the gateway's authenticated scope (`registerGateway`). One route calls every tool of the
 * catalog serving at the time, so tools come and go without touching the router; each request
 * reads one version of the catalog. The handlers translate HTTP to `invoke` and back and add
 * no tool semantics.
 */
export async function toolRoutes (parent: FastifyInstance, options: ToolRoutesOptions): Promise<void> {
  const app = parent.withTypeProvider<ZodTypeProvider>()
  const { catalog, facts, traceCall, audit, documents } = options
  const timeout = catalog.options.defaultTimeoutMs
  // Tool calls take JSON only: anything else is 415, not a string handed to the input schema.
  app.removeContentTypeParser(['text/plain'])
  const serialize = jsonWithin(options.maxResponseBytes)

  const appOf = (request: FastifyRequest): GatewayApp => gatewayAppOf(request, facts)

  /** What `GET /tools` lists for this request: active for its app, and permitted. */
  const visibleTools = (request: FastifyRequest, set: ToolSet<GatewayApp>): AnyTool<GatewayApp>[] =>
    set.active(appOf(request)).filter(tool => app.isPermitted(request.principal.id, tool.id))

  // The document and its UI, per caller, behind this scope's authentication.
  await app.register(callerDocs, {
    viewOf: request => {
      const set = catalog.current
      return { views: documents.views(set), visibleToolIds: () => visibleTools(request, set).map(tool => tool.id) }
    },
    ui: options.docsUi ?? true,
  })

  app.get('/tools', {
    schema: {
      operationId: 'listTools', tags: ['gateway'], summary: 'List the tools you may call',
      description: 'Every tool active for this caller, with its effects, flags and JSON Schemas. With `format`, the same tools as the `tools` field of that provider\'s request body.',
      security: SECURITY, querystring: SpecQuery, response: { 200: z.union([z.object({ tools: z.array(ToolListingSchema) }), ProviderSpecs]), ...problemResponses([400, 401, 403]) },
    },
  }, async request => {
    requireScope(request.principal, SCOPES.read)
    const set = catalog.current
    const visible = visibleTools(request, set)
    const { format, strict } = request.query
    if (format !== undefined) return specsOf(format, visible, { defaultTimeoutMs: timeout, strict: strict === true, names: nameMapsFor(set).get(format)! })
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
    const tool = catalog.current.active(appOf(request)).find(t => t.id === request.params.id)
    if (tool === undefined || !app.isPermitted(request.principal.id, tool.id)) {
      throw new GatewayError('TOOLGATE_NOT_FOUND', `no tool "${request.params.id}"`)
    }
    return listingOf(tool, timeout)
  })

  // Each tool's own operation is in the document (tool-document.ts); this route serves them all.
  app.post('/tools/:id', {
    config: { toolCall: true },
    bodyLimit: options.bodyLimit,
    schema: { hide: true, querystring: CallQuery, headers: CallHeaders },
    validatorCompiler: callValidator as FastifySchemaCompiler<unknown>,
    // parseOutput already validated the value: serialize, do not validate twice.
    serializerCompiler: () => data => JSON.stringify(data),
  }, async (request, reply) => {
    const toolId = (request.params as { id: string }).id
    const tool = catalog.get(toolId)
    // Unknown ids: authenticated first (step 1), then the same 404 an inactive tool gets (step 2).
    if (tool === undefined) throw new GatewayError('TOOLGATE_NOT_FOUND', `no tool "${toolId}"`)
    const { principal, query } = request
    requireScope(principal, SCOPES.call)
    const gatewayApp = appOf(request)
    const waitMs = preferredWaitMs(request.headers.prefer)
    const span = traceCall?.(tool, request)
    const approvalId = single(request.headers[APPROVAL_ID_HEADER])
    const inFlight = options.inFlight?.(toolId)
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
        toolId, input: request.body, dryRun: query.dryRun, escalate: query.escalate, idempotencyKey: single(request.headers['idempotency-key']),
        approvalId, waitForApprovalMs: waitMs,
      }
      // Nothing above awaited: the call runs in the same catalog version the tool came from.
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
