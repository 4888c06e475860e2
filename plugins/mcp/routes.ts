import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify'
import type { CancelSignal } from '../../src/core/abort.js'
import { SCOPES, type GatewayApp, type GatewayFacts } from '../../src/core/app-context.js'
import { requireScope } from '../../src/services/auth/index.js'
import type { InvokeResult, ToolgateError } from '../../src/index.js'
import type { GatewayCalls } from '../../src/services/calls/gateway-calls.js'
import type { CallTracer } from '../observability/tracing.js'
import { CANCELLABLE, Cancellations } from '../../src/services/mcp/cancellations.js'
import { classify, errorText, idOf, JSON_RPC, JsonRpcError, type JsonRpcId } from '../../src/services/mcp/json-rpc.js'
import { envelopeBounds, tooComplexMessage } from '../../src/services/mcp/envelope.js'
import { boundBreachOf, type InputBounds } from '../../src/core/input-bounds.js'
import type { InputIssue } from '../../src/core/errors.js'
import { checkModernRequest, envelopeVersionOf, MODERN_ERRORS, requireEnvelope } from '../../src/services/mcp/modern.js'
import { McpProtocol, type McpCallOptions, type McpCaller } from '../../src/services/mcp/protocol.js'
import { ApprovalContinuations } from '../../src/services/mcp/approval-continuation.js'
import { CallQuestions, QUESTION_TTL_MS } from '../../src/services/mcp/questions.js'
import type { RequestStateSeal } from '../../src/services/mcp/request-state.js'
import type { McpFeatures } from '../../src/services/mcp/features.js'
import type { UpstreamFeatures } from '../../src/services/upstreams/mcp/features.js'
import { isSupportedVersion, originAllowed, SUPPORTED_VERSIONS } from '../../src/services/mcp/http-rules.js'
import { VERSION } from '../../src/services/version.js'
import { disconnectSignalOf } from '../http/disconnect.js'
import { eventOf, EventStream } from './event-stream.js'
import { httpOptionsFound } from '../tools/call-options.js'
import type { FoundOption } from '../../src/core/call-options.js'
import { gatewayAppOf, permitFor } from '../tools/gateway-app.js'
import { problemOf } from '../http/problem.js'
import type { NamedTool } from '../../src/core/bundles/named-tool.js'
import type { LiveBundles } from '../../src/services/bundles/live-bundles.js'
import { bundleFor, visibleIn } from '../bundles/tool-view.js'
import { bundleView, catalogView, type ToolView } from '../../src/services/bundles/tool-view.js'

export interface McpOptions {
  /** Where every call enters the pipeline and is finished, as over REST (its catalog is the one served). */
  readonly calls: GatewayCalls
  readonly facts: GatewayFacts
  /** Origins a browser page may call from, besides the gateway's own host. */
  readonly allowedOrigins: readonly string[]
  readonly bodyLimit: number
  /** How deep and wide a call's input may be; a message gets room for its envelope too. */
  readonly inputBounds: InputBounds
  /** Opens each call's span when tracing is on (absent: no span, no cost). */
  readonly traceCall?: CallTracer
  /** Seals 2026-07-28 `requestState` (see `sealSource`) and how long a retry waits for a decision. */
  readonly requestState: { readonly seal: () => Promise<RequestStateSeal>, readonly approvalWaitMs: number }
  /** The fronted MCP servers' resources and prompts (absent: the gateway fronts none). */
  readonly features?: UpstreamFeatures
  /** The operator's bundles, each served at `/mcp/{name}`. */
  readonly bundles: LiveBundles
  /** Serve the catalog in discovery mode (`MCP_DISCOVERY=on`): search, describe and call instead of every tool. */
  readonly discovery: boolean
}

export const MCP_PATH = '/mcp'
/** What a caller needs `tools:read` for: the listings. */
const LISTS = new Set(['tools/list', 'resources/list', 'resources/templates/list', 'prompts/list'])
/** The `transport` metrics label of calls made here. */
const MCP_TRANSPORT = 'mcp'
/** Body of a request whose JSON did not parse: answered with JSON-RPC's parse error. */
const UNPARSABLE = Symbol('unparsable')

/** Body of a request nested deeper or wider than the bounds: answered with invalid params, before anything reads it. */
class TooComplex {
  readonly id: JsonRpcId | null
  constructor (message: unknown, readonly breach: InputIssue) {
    this.id = idOf(message)
  }
}

/**
 * MCP Streamable HTTP at `POST /mcp`, stateless: every POST is complete in itself, so any
 * replica answers any request, and no session is issued. Registered in the gateway's authenticated scope (see
 * `registerGateway`), behind the same admission and rate limits as the tool routes; each `tools/call`
 * is one `invokeWith` of the same catalog, bound as the REST route binds a call. GET and
 * DELETE are not served (405 from the problem plugin, which knows only POST exists here).
 */
export async function mcpRoutes (app: FastifyInstance, options: McpOptions): Promise<void> {
  const { catalog } = options.calls
  const continuations = new ApprovalContinuations(catalog.approvals, options.requestState.seal, options.requestState.approvalWaitMs)
  // A question's call waits in this process: a retry that reaches another replica is told it is gone.
  const questions = new CallQuestions(options.requestState.seal, QUESTION_TTL_MS)
  const protocol = new McpProtocol({ name: 'toolgate', version: VERSION, defaultTimeoutMs: catalog.options.defaultTimeoutMs, features: options.features?.any }, continuations, questions)
  const cancellations = new Cancellations()
  // Malformed JSON is JSON-RPC's parse error here (400), not the problem+json of the tool routes.
  const parseJson = app.getDefaultJsonParser('error', 'error')
  const bounds = envelopeBounds(options.inputBounds)
  app.removeContentTypeParser(['application/json', 'text/plain'])
  app.addContentTypeParser('application/json', { parseAs: 'string' }, (request, body, done) => {
    void parseJson(request, body as string, (error, value) => {
      if (error !== null) { done(null, UNPARSABLE); return }
      const breach = boundBreachOf(value, bounds)
      done(null, breach === undefined ? value : new TooComplex(value, breach))
    })
  })

  const serve = async (request: FastifyRequest, reply: FastifyReply, view: ToolView<GatewayApp>): Promise<unknown> => {
    if (!originAllowed(request.headers.origin, request.headers.host, options.allowedOrigins)) {
      return await sendRpc(reply, 403, errorText(null, JSON_RPC.invalidRequest, 'origin not allowed'), false)
    }
    const sse = wantsEventStream(request.headers.accept)
    if (sse === undefined) return await sendRpc(reply, 406, errorText(null, JSON_RPC.invalidRequest, 'Accept must include application/json or text/event-stream'), false)
    const version = single(request.headers['mcp-protocol-version'])
    if (version !== undefined && !isSupportedVersion(version)) {
      return await sendRpc(reply, 400, errorText(null, MODERN_ERRORS.unsupportedVersion, `Unsupported protocol version: ${version}`, { supported: SUPPORTED_VERSIONS, requested: version }), sse)
    }
    if (request.body === UNPARSABLE) return await sendRpc(reply, 400, errorText(null, JSON_RPC.parseError, 'parse error: the body is not JSON'), sse)
    if (request.body instanceof TooComplex) {
      const { id, breach } = request.body
      return await sendRpc(reply, 400, errorText(id, JSON_RPC.invalidParams, tooComplexMessage(breach), { errors: [breach] }), sse)
    }
    const inbound = classify(request.body)
    if (inbound.type === 'invalid') return await sendRpc(reply, 400, errorText(inbound.id, JSON_RPC.invalidRequest, inbound.message), sse)
    if (inbound.type === 'reply') return await reply.code(202).send()
    const { call } = inbound
    const scope = cancelScopeOf(request)
    if (call.id === undefined) {
      if (call.method === 'notifications/cancelled') cancellations.cancel(scope, call.params)
      return await reply.code(202).send()
    }
    const { id } = call
    const modern = envelopeVersionOf(call)
    try {
      if (modern === undefined) requireEnvelope(call, version)
      else checkModernRequest(call, modern, { protocolVersion: version, method: single(request.headers['mcp-method']), name: single(request.headers['mcp-name']) })
    } catch (error) {
      if (error instanceof JsonRpcError) return await sendRpc(reply, error.httpStatus, errorText(id, error.code, error.message, error.data), sse)
      throw error
    }
    if (call.method === 'tools/call' || call.method === 'resources/read' || call.method === 'prompts/get') requireScope(request.principal, SCOPES.call)
    else if (LISTS.has(call.method)) requireScope(request.principal, SCOPES.read)
    const cancel = CANCELLABLE.has(call.method) ? cancellations.open(scope, id) : undefined
    // A client that takes events may be told of progress before the result: the answer becomes a stream then.
    const events = call.method === 'tools/call' && acceptsEvents(request.headers.accept) ? new EventStream(reply) : undefined
    try {
      const answer = await protocol.handle(call, new HttpCaller(app, options, request, reply, cancel, events, call.method, view), modern !== undefined)
      if (events?.open === true) return await events.end(answer!.text)
      return await sendRpc(reply, answer!.status, answer!.text, sse)
    } finally {
      if (cancel !== undefined) cancellations.close(cancel)
    }
  }
  app.post(MCP_PATH, { schema: { hide: true }, bodyLimit: options.bodyLimit }, async (request, reply) => await serve(request, reply, catalogView<GatewayApp>()))
  // A bundle's own endpoint: the same server over the bundle's tools, under the bundle's names.
  app.post(`${MCP_PATH}/:bundle`, { schema: { hide: true }, bodyLimit: options.bodyLimit }, async (request, reply) => {
    const { bundle } = request.params as { bundle: string }
    return await serve(request, reply, bundleView<GatewayApp>(bundleFor(request, options.bundles, bundle)))
  })

}

/**
 * One HTTP request's caller: who calls and how a call of theirs enters the pipeline, bound as
 * the REST route binds it. A class rather than closures: one object per request on the hot path.
 */
class HttpCaller implements McpCaller {
  readonly #app: GatewayApp
  readonly principalId: string
  readonly notify: ((json: string) => void) | undefined
  constructor (
    readonly scope: FastifyInstance,
    readonly options: McpOptions,
    readonly request: FastifyRequest,
    readonly reply: FastifyReply,
    readonly cancelled: CancelSignal | undefined,
    events: EventStream | undefined,
    /** The JSON-RPC method answered (for the span of a resource read or prompt get). */
    readonly method: string,
    /** The tools this endpoint serves: the catalog's, or a bundle's. */
    readonly view: ToolView<GatewayApp>,
  ) {
    this.#app = gatewayAppOf(request, options.facts)
    this.principalId = request.principal.id
    this.notify = events === undefined ? undefined : json => { events.notify(json) }
  }

  tools (): NamedTool[] {
    return visibleIn(this.view, this.scope, this.request, this.options.calls.catalog.current, this.#app)
  }

  all (): readonly NamedTool[] {
    return this.view.all(this.options.calls.catalog.current)
  }

  /** A bundle says for its own endpoint; the whole catalog's follows `MCP_DISCOVERY`. */
  get discovery (): boolean {
    return this.view.bundle?.discovery ?? this.options.discovery
  }

  get (name: string): NamedTool | undefined {
    return this.view.get(this.options.calls.catalog.current, name)
  }

  async invoke (toolId: string, input: unknown, call: McpCallOptions): Promise<InvokeResult> {
    const { request } = this
    const { traceCall } = this.options
    return await this.options.calls.call({
      app: this.#app,
      source: request.ip,
      transport: MCP_TRANSPORT,
      bundle: this.view.bundle?.name,
      contentBlocks: true,
      signal: disconnectSignalOf(this.reply),
      isPermitted: permitFor(this.scope, request.principal.id),
      trace: traceCall === undefined ? undefined : tool => traceCall(tool, request, call.carrier, { method: 'tools/call', protocolVersion: single(request.headers['mcp-protocol-version']) }),
    }, { ...call, toolId, input, signal: this.cancelled })
  }

  problemOf (error: ToolgateError): Record<string, unknown> {
    return problemOf(error, this.request.id)
  }

  /** Made only for the requests that read it (resources and prompts). */
  get features (): McpFeatures | undefined {
    const { features, traceCall } = this.options
    // A bundle is a set of tools: the upstreams' resources and prompts are served at /mcp alone.
    if (features === undefined || this.view.bundle !== undefined) return undefined
    const { request } = this
    const permitted = permitFor(this.scope, request.principal.id)
    return features.forCaller(request.principal, permitted ?? everyTool, async ({ tool, input }) => await this.options.calls.call({
      app: this.#app,
      source: request.ip,
      transport: MCP_TRANSPORT,
      signal: disconnectSignalOf(this.reply),
      isPermitted: permitted,
      trace: traceCall === undefined ? undefined : traced => traceCall(traced, request, undefined, { method: this.method, protocolVersion: single(request.headers['mcp-protocol-version']) }),
    }, { toolId: tool.id, input, signal: this.cancelled }, tool), error => this.problemOf(error))
  }

  /** The REST spellings work here too: the query's `mode`, `dryRun` and `escalate`, `Idempotency-Key`, `Approval-Id` and `Prefer: wait`. */
  transportOptions (): FoundOption[] {
    return httpOptionsFound(this.request)
  }
}

function everyTool (): boolean {
  return true
}

/** Request ids are the client's counter: cancellations are matched within one caller (and session). */
function cancelScopeOf (request: FastifyRequest): string {
  const session = single(request.headers['mcp-session-id']) ?? single(request.headers['x-session-id'])
  // Without a session, the principal's id as it is (no string built per request).
  return session === undefined ? request.principal.id : `${request.principal.id}\u0000${session}`
}

/** JSON when the client takes it (or says nothing), else one SSE event; `undefined`: neither (406). */
function wantsEventStream (accept: string | undefined): boolean | undefined {
  if (accept === undefined || accept === '' || accept.includes('application/json')) return false
  const lower = accept.toLowerCase()
  if (lower.includes('application/json') || lower.includes('*/*') || lower.includes('application/*')) return false
  if (lower.includes('text/event-stream')) return true
  return undefined
}

/** Whether the client takes an event stream at all (it may prefer JSON when there is nothing to stream). */
function acceptsEvents (accept: string | undefined): boolean {
  return accept !== undefined && accept.toLowerCase().includes('text/event-stream')
}

async function sendRpc (reply: FastifyReply, status: number, text: string, sse: boolean): Promise<FastifyReply> {
  if (sse) return await reply.code(status).header('cache-control', 'no-cache').type('text/event-stream').send(eventOf(text))
  return await reply.code(status).type('application/json; charset=utf-8').send(text)
}

function single (value: string | string[] | undefined): string | undefined {
  return Array.isArray(value) ? value[0] : value
}
