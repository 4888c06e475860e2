import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify'
import type { GatewayApp, GatewayFacts } from '../src/core/app-context.js'
import type { AnyTool, ApprovalRule, BindOptions, CallRecord, InvokeRequest, ToolCatalog } from '../src/index.js'
import { AuditTrail } from '../src/services/audit/audit-trail.js'
import type { InFlight } from '../src/services/metrics/gateway-metrics.js'
import type { CallSpan } from '../src/services/tracing/call-span.js'
import { logFieldsOf } from '../src/services/tracing/span-ids.js'
import { httpCallOptions } from './call-options.js'
import { disconnectSignalOf } from './disconnect.js'
import { gatewayAppOf, permitFor } from './gateway-app.js'
import { logsInfo } from './lazy-logger.js'
import { DRY_RUN_TYPE } from './schemas.js'
import type { CallTracer } from './tracing.js'

export interface RestCallsOptions {
  readonly catalog: ToolCatalog<GatewayApp>
  readonly facts: GatewayFacts
  /** The in-flight gauge of a tool (absent: not counted). */
  readonly inFlight?: (toolId: string) => InFlight
  /** Encodes a result inside the pipeline, within the response size limit (`jsonWithin`). */
  readonly serialize: (value: unknown) => string
  readonly approvalRule?: (principalId: string, toolId: string) => ApprovalRule | undefined
  readonly traceCall?: CallTracer
  readonly audit?: AuditTrail
}

/**
 * `POST /tools/{id}` as one `invoke`: the request's binding and call in, the result's status,
 * headers and body out. The REST counterpart of the MCP face's caller (mcp.ts).
 */
export class RestCalls {
  readonly #options: RestCallsOptions
  readonly #scope: FastifyInstance

  constructor (scope: FastifyInstance, options: RestCallsOptions) {
    this.#scope = scope
    this.#options = options
  }

  async call (tool: AnyTool<GatewayApp>, request: FastifyRequest, reply: FastifyReply): Promise<FastifyReply> {
    const { catalog, traceCall } = this.#options
    const options = httpCallOptions(request)
    const span = traceCall?.(tool, request)
    const bind = this.#binding(request, reply, options.mode, span, options.approvalId)
    const call: InvokeRequest = {
      toolId: tool.id, input: request.body, dryRun: options.dryRun, escalate: options.escalate, idempotencyKey: options.idempotencyKey,
      approvalId: options.approvalId, waitForApprovalMs: options.waitForApprovalMs,
    }
    const inFlight = this.#options.inFlight?.(tool.id)
    let result
    inFlight?.inc()
    try {
      // Nothing since the route read the tool awaited: the call runs in the catalog version the tool came from.
      // Traced, the call runs with its span active where a context manager can see it (`CallSpan.run`).
      result = await (span === undefined ? catalog.invokeWith(bind, call) : span.run(() => catalog.invokeWith(bind, call)))
    } finally {
      inFlight?.dec()
    }
    if (result.replayed) void reply.header('Idempotent-Replayed', 'true')
    const waitMs = options.waitForApprovalMs
    if (waitMs !== undefined && (result.approval !== undefined || result.waitedForApproval === true)) {
      void reply.header('Preference-Applied', `wait=${Math.min(waitMs, catalog.approvals.maxWaitMs) / 1000}`)
    }
    if (result.approval !== undefined) {
      return await reply.code(202).header('Location', `${this.#scope.prefix}/approvals/${result.approval.id}`).type('application/json; charset=utf-8').send(result.body)
    }
    return await reply.code(200).type(options.dryRun === true ? DRY_RUN_TYPE : 'application/json; charset=utf-8').send(result.body)
  }

  #binding (request: FastifyRequest, reply: FastifyReply, mode: 'normal' | 'plan' | undefined, span: CallSpan | undefined, approvalId: string | undefined): BindOptions<GatewayApp> {
    const { principal } = request
    const app = gatewayAppOf(request, this.#options.facts)
    const { approvalRule, audit } = this.#options
    return {
      app,
      execution: { signal: disconnectSignalOf(reply) },
      domain: app.domain,
      idempotencyScope: principal.id,
      mode,
      isPermitted: permitFor(this.#scope, principal.id),
      onRecord: (record: CallRecord) => { settled(request, record, span, audit, approvalId) },
      serialize: this.#options.serialize,
      requester: principal.id,
      approvalRule: approvalRule === undefined ? undefined : tool => approvalRule(principal.id, tool.id),
      trace: span?.headers,
    }
  }
}

/** Where a call is finished on the HTTP face: its span closed, its audit line, its log line. */
function settled (request: FastifyRequest, record: CallRecord, span: CallSpan | undefined, audit: AuditTrail | undefined, approvalId: string | undefined): void {
  span?.end(record, approvalId)
  if (audit !== undefined && AuditTrail.covers(record)) {
    audit.call(record, { principal: request.principal.id, source: request.ip, requestId: request.id, traceId: span?.traceId, input: request.body, ...(approvalId === undefined ? {} : { approvalId }) })
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
    principal: request.principal.id, source: request.ip, domain: record.domain, effects: record.effectsLabel,
    mutated: record.mutatedResources.length === 0 ? undefined : record.mutatedResources,
    ...logFieldsOf(record.trace),
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
