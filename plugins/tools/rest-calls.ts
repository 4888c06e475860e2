import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify'
import type { GatewayApp, GatewayFacts } from '../../src/core/app-context.js'
import type { AnyTool } from '../../src/index.js'
import type { GatewayCalls } from '../../src/services/calls/gateway-calls.js'
import { httpCallOptions } from './call-options.js'
import { disconnectSignalOf } from '../http/disconnect.js'
import { gatewayAppOf, permitFor } from './gateway-app.js'
import { DRY_RUN_TYPE } from './call-schemas.js'
import type { CallTracer } from '../observability/tracing.js'
import { reportOf } from '../../src/core/limits/report.js'
import { limitHeaders } from '../limits/fields.js'

export interface RestCallsOptions {
  readonly calls: GatewayCalls
  readonly facts: GatewayFacts
  readonly traceCall?: CallTracer
}

/**
 * `POST /tools/{id}` as one call: the request's options and origin in, the result's status,
 * headers and body out. Everything a call leaves behind (span, audit line, log line, in-flight
 * count) is `GatewayCalls`'s, as on every face.
 */
export class RestCalls {
  readonly #options: RestCallsOptions
  readonly #scope: FastifyInstance

  constructor (scope: FastifyInstance, options: RestCallsOptions) {
    this.#scope = scope
    this.#options = options
  }

  /** `bundle`: the bundle whose address the call came to (absent: `/tools/{id}`). */
  async call (tool: AnyTool<GatewayApp>, request: FastifyRequest, reply: FastifyReply, bundle?: string): Promise<FastifyReply> {
    const { calls, traceCall } = this.#options
    const options = httpCallOptions(request)
    const result = await calls.call({
      app: gatewayAppOf(request, this.#options.facts),
      source: request.ip,
      bundle,
      signal: disconnectSignalOf(reply),
      isPermitted: permitFor(this.#scope, request.principal.id),
      trace: traceCall === undefined ? undefined : traced => traceCall(traced, request),
      // The error handler and the request log line read it: the pipeline saw this call.
      onRecord: record => { request.callRecord = record },
    }, { ...options, toolId: tool.id, input: request.body })
    if (result.replayed) void reply.header('Idempotent-Replayed', 'true')
    if (result.limits !== undefined) limitHeaders(reply, result.limits.map(reportOf), options.dryRun === true)
    const waitMs = options.waitForApprovalMs
    if (waitMs !== undefined && (result.approval !== undefined || result.waitedForApproval === true)) {
      void reply.header('Preference-Applied', `wait=${Math.min(waitMs, calls.catalog.approvals.maxWaitMs) / 1000}`)
    }
    if (result.approval !== undefined) {
      return await reply.code(202).header('Location', `${this.#scope.prefix}/approvals/${result.approval.id}`).type('application/json; charset=utf-8').send(result.body)
    }
    return await reply.code(200).type(options.dryRun === true ? DRY_RUN_TYPE : 'application/json; charset=utf-8').send(result.body)
  }
}
