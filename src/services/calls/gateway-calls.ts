import type { CancelSignal } from '../../core/abort.js'
import type { GatewayApp } from '../../core/app-context.js'
import type { CallOptions } from '../../core/call-options.js'
import type { CallRecord } from '../../core/call-record.js'
import type { BindOptions, ToolCatalog } from '../../core/catalog.js'
import type { ProgressUpdate } from '../../core/progress.js'
import type { Elicit } from '../../core/elicitation.js'
import type { AnyTool } from '../../core/tool.js'
import type { ApprovalRule, InvokeRequest, InvokeResult } from '../../core/types.js'
import { AuditTrail } from '../audit/audit-trail.js'
import type { RecentCalls } from '../console/recent-calls.js'
import type { InFlight } from '../metrics/gateway-metrics.js'
import type { CallSpan } from '../tracing/call-span.js'
import { logFieldsOf } from '../tracing/span-ids.js'

export interface CallsOptions {
  readonly catalog: ToolCatalog<GatewayApp>
  /** The face's encoding of a result, run inside the pipeline (`jsonWithin`: circular or oversized output is a 502). */
  readonly serialize: (value: unknown) => string
  /** The in-flight gauge of a tool (absent: not counted). */
  readonly inFlight?: (toolId: string) => InFlight
  /** The audit trail, when `AUDIT_LOG` is set. */
  readonly audit?: AuditTrail
  /** The operator's approval rules (absent: none), on every face alike. */
  readonly approvalRule?: (principalId: string, toolId: string) => ApprovalRule | undefined
  /** The latest finished calls, for the operators' console (absent: not kept). */
  readonly recent?: RecentCalls
  /** The log's level: a line per call at info (a failure at error, whatever the level), the input too at debug. */
  readonly logs: { readonly info: boolean, readonly debug: boolean }
}

/** What a face knows of one call that the pipeline does not: who calls, from where, over what, how it is traced. */
export interface CallOrigin {
  /** Who calls, the request's id, the concurrency domain and the log (the request's). */
  readonly app: GatewayApp
  /** The client's address (the process that launched it, over stdio). */
  readonly source: string
  /** The face, for the record and the metrics' `transport` label: `mcp`, `mcp-stdio`, `intents` (absent: REST). */
  readonly transport?: string
  /** The bundle the call came through (its addresses), for the record, metrics, audit and log (absent: none). */
  readonly bundle?: string
  /** Aborts the call when the client goes away. */
  readonly signal?: CancelSignal
  /** The permission rules of this caller (absent: none configured). */
  readonly isPermitted?: (tool: AnyTool<GatewayApp>) => boolean
  /** Opens the call's span, when the gateway traces. */
  readonly trace?: (tool: AnyTool<GatewayApp>) => CallSpan
  /** Told of the record as the call settles (REST marks its request with it). */
  readonly onRecord?: (record: CallRecord) => void
  /** The face answers a tool's MCP content blocks (the MCP faces); others get the output alone. */
  readonly contentBlocks?: boolean
}

/** One call as a face read it: the tool, the input as sent, and its options (parsed by their one definition). */
export interface GatewayCall extends CallOptions {
  readonly toolId: string
  readonly input: unknown
  /** Aborts this call only (an MCP `notifications/cancelled`). */
  readonly signal?: CancelSignal
  /** Told how far the call has got (an MCP client's `notifications/progress`). */
  readonly onProgress?: (update: ProgressUpdate) => void
  /** Asks the person at the other end (an MCP client's elicitation), when the channel can. */
  readonly onElicit?: Elicit
}

/**
 * Where every face's call enters the pipeline and where it is finished: counted in flight,
 * traced, then, as it settles, its span ended, its audit line and its log line written. REST,
 * MCP over HTTP and stdio, and the intents route differ only in the `CallOrigin` they hand in,
 * so no face can drift from another in what a call leaves behind.
 */
export class GatewayCalls {
  readonly #options: CallsOptions

  constructor (options: CallsOptions) {
    this.#options = options
  }

  get catalog (): ToolCatalog<GatewayApp> {
    return this.#options.catalog
  }

  /** `unlisted`: a tool that is not in the catalog (an upstream's resource read or prompt get), found and checked by the face. */
  async call (origin: CallOrigin, call: GatewayCall, unlisted?: AnyTool<GatewayApp>): Promise<InvokeResult> {
    const { catalog } = this.#options
    // No await before `invokeWith`: the call runs in the catalog version its span was opened for.
    const tool = unlisted ?? catalog.get(call.toolId)
    const span = tool === undefined ? undefined : origin.trace?.(tool)
    const binding = this.#binding(origin, call, span)
    const request: InvokeRequest = {
      toolId: call.toolId, input: call.input, dryRun: call.dryRun, escalate: call.escalate, idempotencyKey: call.idempotencyKey,
      approvalId: call.approvalId, waitForApprovalMs: call.waitForApprovalMs, signal: call.signal, onProgress: call.onProgress, onElicit: call.onElicit,
    }
    const gauge = this.#options.inFlight?.(call.toolId)
    gauge?.inc()
    try {
      // Traced, the call runs with its span active where a context manager can see it (`CallSpan.run`).
      if (unlisted !== undefined) return await (span === undefined ? catalog.invokeUnlisted(binding, unlisted, request) : span.run(() => catalog.invokeUnlisted(binding, unlisted, request)))
      return await (span === undefined ? catalog.invokeWith(binding, request) : span.run(() => catalog.invokeWith(binding, request)))
    } finally {
      gauge?.dec()
    }
  }

  #binding (origin: CallOrigin, call: GatewayCall, span: CallSpan | undefined): BindOptions<GatewayApp> {
    const { app } = origin
    const principal = app.principal.id
    const { approvalRule } = this.#options
    return {
      app,
      execution: { signal: origin.signal },
      domain: app.domain,
      idempotencyScope: principal,
      mode: call.mode,
      isPermitted: origin.isPermitted,
      serialize: this.#options.serialize,
      transport: origin.transport,
      bundle: origin.bundle,
      requester: principal,
      approvalRule: approvalRule === undefined ? undefined : tool => approvalRule(principal, tool.id),
      onRecord: record => { this.#finish(origin, call, record, span) },
      trace: span?.headers,
      contentBlocks: origin.contentBlocks === true,
    }
  }

  /** The one place a call is finished, on every face. */
  #finish (origin: CallOrigin, call: GatewayCall, record: CallRecord, span: CallSpan | undefined): void {
    origin.onRecord?.(record)
    span?.end(record, call.approvalId)
    const { audit } = this.#options
    if (audit !== undefined && AuditTrail.covers(record)) {
      const credential = this.#options.catalog.get(record.toolId)?.origin?.credential
      audit.call(record, {
        principal: origin.app.principal.id, source: origin.source, requestId: origin.app.requestId, traceId: span?.traceId, input: call.input,
        ...(call.approvalId === undefined ? {} : { approvalId: call.approvalId }),
        ...(credential === undefined ? {} : { credential }),
      })
    }
    this.#options.recent?.add(record, origin.app.principal.id, span?.traceId, call.approvalId)
    this.#log(origin, call, record)
  }

  /** One line per call, with the request id from the request's logger; the input only at debug. */
  #log (origin: CallOrigin, call: GatewayCall, record: CallRecord): void {
    const { logs } = this.#options
    if (record.status < 500 && !logs.info) return
    const { log, principal } = origin.app
    const line = {
      tool: record.toolId, outcome: record.outcome, status: record.status, code: record.code, callId: record.callId, transport: record.transport ?? 'rest', bundle: record.bundle,
      durationMs: Math.round(record.durationMs * 100) / 100, queueMs: Math.round(record.queueMs * 100) / 100,
      principal: principal.id, source: origin.source, domain: record.domain, effects: record.effectsLabel,
      mutated: record.mutatedResources.length === 0 ? undefined : record.mutatedResources,
      ...logFieldsOf(record.trace),
    }
    if (record.status >= 500) log.error({ ...line, err: record.failure }, 'tool call failed')
    else log.info(line, 'tool call')
    if (logs.debug) log.debug({ callId: record.callId, input: call.input, debugSteps: record.debugSteps }, 'tool call input')
  }
}

const INFO_LEVELS = new Set(['info', 'debug', 'trace'])

/** Which call lines a log level keeps (pino's names). */
export function logsOf (level: string): CallsOptions['logs'] {
  return { info: INFO_LEVELS.has(level), debug: level === 'debug' || level === 'trace' }
}
