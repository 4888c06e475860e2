import { reportOf } from '../../core/limits/report.js'
import { GatewayError, ToolgateError } from '../../core/errors.js'
import type { AnyTool } from '../../core/tool.js'
import type { InvokeResult } from '../../core/types.js'
import type { ApprovalView } from '../../core/approvals/view.js'
import { refused, type ApprovalContinuations } from './approval-continuation.js'
import { CallQuestions, type Round } from './questions.js'
import { takesUrlElicitation } from './client-requests.js'
import { errorText, JSON_RPC, JsonRpcError, resultText, type JsonRpcCall } from './json-rpc.js'
import { META, MODERN_VERSION } from './modern.js'
import { mcpToolAs, mcpToolOf, takesObjectInput } from './tool-spec.js'
import type { NamedTool } from '../../core/bundles/named-tool.js'
import { callOptionsOf, RESULT_META, type McpCallOptions } from './call-meta.js'
import type { FoundOption } from '../../core/call-options.js'
import type { Elicit } from '../../core/elicitation.js'
import type { ProgressUpdate } from '../../core/progress.js'
import { CALL_TOOL, DESCRIBE_TOOL, DISCOVERY_LISTING, isDiscoveryTool } from './discovery-tools.js'
import { argumentsOf, callOf, describeResult, searchResult, unknownTool as notFound, type DiscoveryView } from './discovery.js'
import { getPrompt, listPrompts, listResources, listTemplates, readResource, type McpFeatures } from './features.js'

/** Revisions of the 2025 family this server answers `initialize` with, newest first. */
export const LEGACY_VERSIONS = ['2025-11-25', '2025-06-18', '2025-03-26', '2024-11-05'] as const
const LATEST_LEGACY_VERSION = LEGACY_VERSIONS[0]

export type { McpCallOptions } from './call-meta.js'

/**
 * One caller's view of the gateway, built by the adapter per request: which tools it may see
 * and how its calls enter the pipeline (the same `invokeWith` the REST route uses).
 */
export interface McpCaller {
  /** Who calls: a `requestState` issued to one principal opens for no other. */
  readonly principalId: string
  /** The tools this caller may call (active and permitted), in declaration order, as this endpoint names them. */
  tools (): readonly NamedTool[]
  /**
   * Every tool this endpoint names, whoever calls: the same array while they do not change, so
   * that discovery's search index is built once per catalog version (visibility: `tools()`).
   */
  all (): readonly NamedTool[]
  /** The operator serves this endpoint in discovery mode: three tools (search, describe, call) instead of every tool. */
  readonly discovery?: boolean
  /**
   * The tool this endpoint serves under `name`, active or not (the pipeline checks `active`
   * and rules); undefined: unknown here (a bundle's endpoint knows only the bundle's tools).
   */
  get (name: string): NamedTool | undefined
  /** Runs a call of the tool `toolId` (its own id, whatever name the caller used). */
  invoke (toolId: string, input: unknown, options: McpCallOptions): Promise<InvokeResult>
  /** The problem object the REST route would answer for this failure. */
  problemOf (error: ToolgateError): Record<string, unknown>
  /** Options the transport carries beside `_meta` (HTTP: the REST query and headers), as found; may refuse (400). */
  transportOptions? (): readonly FoundOption[]
  /**
   * Sends a notification (its JSON text) to this caller while its request runs; absent when the
   * channel cannot carry one (an HTTP client that takes JSON only): its progress is not asked for.
   */
  readonly notify?: (json: string) => void
  /**
   * Asks this caller's client a question while its request runs (`elicitation/create`); absent
   * when it cannot be asked (it declared no form elicitation, or the channel carries no request
   * back to it): a tool then has no `ctx.elicit`, and an upstream server that asks is declined.
   */
  readonly elicit?: Elicit
  /** The fronted MCP servers' resources and prompts as this caller may see and use them; absent: none. */
  readonly features?: McpFeatures
}

export interface McpServerInfo {
  readonly name: string
  readonly version: string
  readonly defaultTimeoutMs: number
  readonly instructions?: string
  /** The gateway fronts MCP servers: it serves their resources and prompts too. */
  readonly features?: boolean
}

/**
 * MCP's server side for tools, with no transport and no framework: a JSON-RPC call in, the
 * JSON text of its response out (`undefined` for a notification). Every `tools/call` is one
 * pipeline call; nothing here re-implements a step.
 */
export class McpProtocol {
  /**
   * `continuations`: a call waiting for approval answers 2026-07-28 clients `input_required`
   * with a sealed `requestState` (absent: the error result older revisions get). `questions`:
   * a call that asks its 2026-07-28 caller a question (elicitation) answers `input_required`
   * with it, parked until the retry brings the answer (absent: such a caller is not asked).
   */
  constructor (readonly info: McpServerInfo, readonly continuations?: ApprovalContinuations, readonly questions?: CallQuestions) {}

  /**
   * The answer to one request (its HTTP status and JSON text), or `undefined` for a
   * notification. `modern`: the request came in revision 2026-07-28 (its envelope in `_meta`).
   */
  async handle (call: JsonRpcCall, caller: McpCaller, modern = false): Promise<McpAnswer | undefined> {
    if (call.id === undefined) return undefined // notifications (initialized, cancelled) need no answer
    try {
      return { status: 200, text: resultText(call.id, modern ? await this.#dispatchModern(call, caller) : await this.#dispatch(call, caller)) }
    } catch (error) {
      if (error instanceof JsonRpcError) return { status: error.httpStatus, text: errorText(call.id, error.code, error.message, error.data) }
      throw error
    }
  }

  /** 2026-07-28: no `initialize`; every result says `resultType`, lists say how long they keep. */
  async #dispatchModern (call: JsonRpcCall, caller: McpCaller): Promise<string> {
    switch (this.#served(call.method)) {
      case 'tools/call': return await this.callTool(call.params, caller, true)
      // The list depends on the caller (rules, `active`): cacheable by this caller only.
      case 'tools/list': return withResultType(this.listTools(caller), PRIVATE_LIST)
      case 'server/discover': return JSON.stringify(this.discover())
      case 'ping': return '{"resultType":"complete"}'
      case 'resources/list': return withResultType(listResources(caller.features), PRIVATE_LIST)
      case 'resources/templates/list': return withResultType(listTemplates(caller.features), PRIVATE_LIST)
      case 'prompts/list': return withResultType(listPrompts(caller.features), PRIVATE_LIST)
      case 'resources/read': return withResultType(await readResource(call.params, caller.features), PRIVATE_LIST)
      case 'prompts/get': return withResultType(await getPrompt(call.params, caller.features), PRIVATE_LIST)
      default: throw new JsonRpcError(JSON_RPC.methodNotFound, `method not found: ${call.method}`, undefined, 404)
    }
  }

  discover (): Record<string, unknown> {
    return {
      resultType: 'complete',
      supportedVersions: [MODERN_VERSION, ...LEGACY_VERSIONS],
      capabilities: this.#capabilities(),
      ...(this.info.instructions === undefined ? {} : { instructions: this.info.instructions }),
      ttlMs: 0,
      cacheScope: 'public',
      _meta: { [META.serverInfo]: { name: this.info.name, version: this.info.version } },
    }
  }

  /** The result JSON of a request; protocol failures throw `JsonRpcError`. */
  async #dispatch (call: JsonRpcCall, caller: McpCaller): Promise<string> {
    switch (this.#served(call.method)) {
      case 'tools/call': return await this.callTool(call.params, caller)
      case 'tools/list': return this.listTools(caller)
      case 'ping': return '{}'
      case 'initialize': return JSON.stringify(this.initialize(call.params))
      case 'resources/list': return listResources(caller.features)
      case 'resources/templates/list': return listTemplates(caller.features)
      case 'prompts/list': return listPrompts(caller.features)
      case 'resources/read': return await readResource(call.params, caller.features)
      case 'prompts/get': return await getPrompt(call.params, caller.features)
      default: throw new JsonRpcError(JSON_RPC.methodNotFound, `method not found: ${call.method}`)
    }
  }

  initialize (params: Record<string, unknown>): Record<string, unknown> {
    const asked = params.protocolVersion
    const version = (LEGACY_VERSIONS as readonly unknown[]).includes(asked) ? asked as string : LATEST_LEGACY_VERSION
    return {
      protocolVersion: version,
      capabilities: this.#capabilities(),
      serverInfo: { name: this.info.name, title: 'toolgate', version: this.info.version },
      ...(this.info.instructions === undefined ? {} : { instructions: this.info.instructions }),
    }
  }

  /** The method, or '' (not found) for resources and prompts when the gateway fronts no MCP server. */
  #served (method: string): string {
    return this.info.features === true || !FEATURE_METHODS.has(method) ? method : ''
  }

  /** Lists are complete at once (no cursor); they change live, read again (no `list_changed` over a stateless endpoint). */
  #capabilities (): Record<string, unknown> {
    const tools = { tools: { listChanged: false } }
    return this.info.features === true ? { ...tools, resources: { listChanged: false, subscribe: false }, prompts: { listChanged: false } } : tools
  }

  listTools (caller: McpCaller): string {
    if (caller.discovery === true) return DISCOVERY_LISTING
    const timeout = this.info.defaultTimeoutMs
    return JSON.stringify({ tools: caller.tools().filter(named => takesObjectInput(named.tool, timeout)).map(named => mcpToolAs(named, timeout)) })
  }

  /** The result JSON of a `tools/call`; `modern`: with its `resultType` (2026-07-28). */
  async callTool (params: Record<string, unknown>, caller: McpCaller, modern = false): Promise<string> {
    // A direct call of a tool by its own name works in discovery mode too: the same call.
    if (caller.discovery === true && isDiscoveryTool(params.name)) return await this.#discover(params, caller, modern)
    return await this.#call(params, caller, modern)
  }

  /**
   * Discovery mode's tools. `call_tool` is unwrapped into the call it stands for, then runs as a
   * direct `tools/call` would (approvals, `requestState` retries, `_meta` options, progress):
   * the client's retry sends `call_tool` again with the same arguments, and it unwraps alike.
   * Bad arguments and unknown tools are results the model reads: REST's problem for them.
   */
  async #discover (params: Record<string, unknown>, caller: McpCaller, modern: boolean): Promise<string> {
    const complete = modern ? withResultType : asIs
    let inner: ReturnType<typeof callOf>
    try {
      const args = argumentsOf(params.arguments)
      if (params.name !== CALL_TOOL) {
        const view: DiscoveryView = { all: caller.all(), visible: caller.tools(), defaultTimeoutMs: this.info.defaultTimeoutMs }
        return complete(params.name === DESCRIBE_TOOL ? describeResult(args, view) : searchResult(args, view))
      }
      inner = callOf(args)
    } catch (error) {
      if (error instanceof GatewayError) return complete(failedResult(caller.problemOf(error)))
      throw error
    }
    try {
      return await this.#call({ ...params, name: inner.name, arguments: inner.arguments }, caller, modern)
    } catch (error) {
      if (error instanceof UnknownTool) return complete(failedResult(caller.problemOf(notFound(inner.name))))
      throw error
    }
  }

  async #call (params: Record<string, unknown>, caller: McpCaller, modern: boolean): Promise<string> {
    const { name } = params
    // Absent arguments are none; present, they must be an object (`null` is not "none").
    const input = params.arguments === undefined ? {} : params.arguments
    if (typeof name !== 'string') throw new JsonRpcError(JSON_RPC.invalidParams, 'params.name must be a string')
    if (typeof input !== 'object' || input === null || Array.isArray(input)) throw new JsonRpcError(JSON_RPC.invalidParams, 'params.arguments must be an object')
    let tool = caller.get(name)?.tool
    if (tool === undefined) throw unknownTool(name)
    const toolId = tool.id
    const complete = modern ? withResultType : asIs
    let options: McpCallOptions = callOptionsOf(params._meta, () => caller.transportOptions?.() ?? [])
    let resumed: Awaited<ReturnType<ApprovalContinuations['redeem']>> | undefined
    let round: Round | undefined
    let result: InvokeResult
    try {
      if (modern && params.requestState !== undefined) {
        // Refused before the state is spent: a state continues exactly the call it was issued for.
        if (options.dryRun === true || options.approvalId !== undefined) {
          throw new JsonRpcError(JSON_RPC.invalidParams, `requestState continues the call as it was made: send it without _meta["${RESULT_META.dryRun}"] or _meta["${RESULT_META.approvalId}"]`)
        }
        const state = await this.#open(params.requestState, caller, name)
        if ('question' in state) {
          if (this.questions === undefined) throw refused('this server asks no questions')
          round = await this.questions.resume(state, params.inputResponses)
        } else if ('retry' in state) {
          // Nothing waits: the call runs anew (now that the account is linked, or it asks again).
        } else {
          resumed = await this.continuations!.redeem(state)
          options = { ...options, approvalId: resumed.approvalId, waitForApprovalMs: this.continuations!.waitMs }
        }
      }
      // The declaration the call runs with: the catalog may have been replaced during the await
      // above, and the pipeline finds its tool in the same turn as this look-up.
      tool = caller.get(name)?.tool ?? tool
      if (round === undefined) {
        const channel = withChannel(options, caller)
        // A 2026-07-28 client that can answer a question: the call may ask it, round by round.
        round = modern && this.questions !== undefined && CallQuestions.canAsk(params._meta)
          ? await this.questions.start(caller.principalId, name, async elicit => await caller.invoke(toolId, input, { ...channel, onElicit: elicit }))
          : { result: caller.invoke(toolId, input, channel) }
      }
      if ('inputRequired' in round) return round.inputRequired
      result = await round.result
    } catch (error) {
      // Inactive tools are unknown ones (contract step 2): a protocol error, as for a typo.
      if (error instanceof GatewayError && error.code === 'TOOLGATE_NOT_FOUND') throw unknownTool(name)
      if (!(error instanceof ToolgateError)) throw error
      // An account to link first: a 2026-07-28 client that opens URLs is sent to the connections page, then retries.
      if (modern && resumed === undefined && error instanceof GatewayError && error.code === 'TOOLGATE_LINK_REQUIRED' && this.continuations !== undefined && takesUrlElicitation(clientCapabilitiesOf(params._meta))) {
        return linkRequired(await this.continuations.retry(caller.principalId, name, LINK_RETRY_MS), error)
      }
      // Waited and still undecided: ask again, with the state already made live for the next retry.
      if (resumed !== undefined && error instanceof GatewayError && error.code === 'TOOLGATE_APPROVAL_PENDING') {
        return inputRequired(await resumed.next(), await this.continuations!.view(resumed.approvalId))
      }
      // After a redeemed state the client holds none: the approval's id is how it may go on (a 429 or 503 is retryable).
      return complete(failedResult(caller.problemOf(error), resumed?.approvalId))
    }
    if (result.approval !== undefined) {
      if (modern && this.continuations !== undefined) {
        try {
          return inputRequired(await this.continuations.issue(result.approval, caller.principalId, name), result.approval)
        } catch (error) {
          if (error instanceof ToolgateError) return complete(failedResult(caller.problemOf(error)))
          throw error
        }
      }
      return complete(approvalResult(result.approval))
    }
    return complete(this.#successResult(tool, result, options.dryRun === true))
  }

  async #open (state: unknown, caller: McpCaller, name: string): ReturnType<ApprovalContinuations['open']> {
    if (typeof state !== 'string') throw new JsonRpcError(JSON_RPC.invalidParams, 'params.requestState must be a string')
    if (this.continuations === undefined) throw new JsonRpcError(JSON_RPC.invalidParams, 'requestState refused: this server issues none')
    return await this.continuations.open(state, caller.principalId, name)
  }

  #successResult (tool: AnyTool, result: InvokeResult, dryRun: boolean): string {
    const body = result.body ?? JSON.stringify(result.value ?? null)
    const text = JSON.stringify(body)
    const limits = result.limits === undefined ? '' : `"${RESULT_META.limits}":${JSON.stringify(result.limits.map(reportOf))}`
    if (dryRun) {
      // A proposal is not the tool's output: structuredContent would break its outputSchema.
      return `{"content":[{"type":"text","text":${text}}],"_meta":{"${RESULT_META.dryRun}":true,"${RESULT_META.proposal}":${body}${limits === '' ? '' : `,${limits}`}}}`
    }
    const structured = mcpToolOf(tool, this.info.defaultTimeoutMs).outputSchema !== undefined
    const metas = [...(result.replayed ? [`"${RESULT_META.replayed}":true`] : []), ...(limits === '' ? [] : [limits])]
    const meta = metas.length === 0 ? '' : `,"_meta":{${metas.join(',')}}`
    const { content } = result
    if (content !== undefined) {
      // The tool's own blocks, as it gave them (an upstream's, as its server sent them).
      const blocks = content.body ?? JSON.stringify(content.content)
      const structuredContent = content.hasStructuredContent ? (content.structuredContent === undefined ? undefined : JSON.stringify(content.structuredContent)) : structured ? body : undefined
      return `{"content":${blocks}${structuredContent === undefined ? '' : `,"structuredContent":${structuredContent}`},"isError":false${meta}}`
    }
    return structured
      ? `{"content":[{"type":"text","text":${text}}],"structuredContent":${body},"isError":false${meta}}`
      : `{"content":[{"type":"text","text":${text}}],"isError":false${meta}}`
  }
}

/**
 * What the channel lets the call do beside answering: tell its progress as
 * `notifications/progress` naming the client's token (when it sent one and the channel can carry
 * them), and ask the client a question (when it can be asked).
 */
function withChannel (options: McpCallOptions, caller: McpCaller): McpCallOptions {
  const { notify, elicit } = caller
  const token = options.progressToken
  const progress = token !== undefined && notify !== undefined
  if (!progress && elicit === undefined) return options
  const prefix = progress ? `{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":${JSON.stringify(token)},` : ''
  return {
    ...options,
    ...(progress ? { onProgress: (update: ProgressUpdate) => { notify(prefix + JSON.stringify(update).slice(1) + '}') } } : {}),
    ...(elicit === undefined ? {} : { onElicit: elicit }),
  }
}

export interface McpAnswer {
  readonly status: number
  readonly text: string
}

/** Older revisions: a result's JSON as it is (no `resultType`). */
/** What a gateway serves only when it fronts MCP servers (and says so in its capabilities). */
const FEATURE_METHODS = new Set(['resources/list', 'resources/templates/list', 'resources/read', 'prompts/list', 'prompts/get'])

/** A list or read that depends on the caller (rules, `active`) and changes live: cacheable by this caller only, not kept. */
const PRIVATE_LIST = ',"ttlMs":0,"cacheScope":"private"'

function asIs (json: string): string {
  return json
}

/** A result object's JSON with `resultType` (and more members) added up front, without re-parsing it. */
function withResultType (json: string, more = ''): string {
  return `{"resultType":"complete"${more},${json.slice(1)}`
}

/** A call of a tool this endpoint does not know (or the caller may not see): a protocol error, as for a typo. */
class UnknownTool extends JsonRpcError {}

function unknownTool (name: string): JsonRpcError {
  return new UnknownTool(JSON_RPC.invalidParams, `unknown tool: ${name}`)
}

/** How long a person has to link an account and the client to retry the call. */
const LINK_RETRY_MS = 15 * 60_000

/**
 * 2026-07-28: the call ran nothing because the person must link their account at an upstream
 * first: a URL elicitation of the connections page; the client opens it, then retries the call
 * with the state (whatever the person did: a call still without a link asks again).
 */
function linkRequired (requestState: string, error: GatewayError): string {
  const { linkUrl, upstream } = error.extensions as { linkUrl?: unknown, upstream?: unknown }
  const params = { mode: 'url', elicitationId: requestState.slice(-22), url: String(linkUrl), message: `Link your account at ${String(upstream)} to continue: ${error.message}` }
  return `{"resultType":"input_required","inputRequests":{"link":${JSON.stringify({ method: 'elicitation/create', params })}},"requestState":${JSON.stringify(requestState)}}`
}

function clientCapabilitiesOf (meta: unknown): unknown {
  return typeof meta === 'object' && meta !== null ? (meta as Record<string, unknown>)[META.clientCapabilities] : undefined
}

/**
 * 2026-07-28: the call cannot complete until a person decides. The client retries with the
 * same arguments and `requestState` (the SDKs do so by themselves); `_meta` shows the approval.
 */
function inputRequired (requestState: string, approval: ApprovalView | undefined): string {
  const meta = approval === undefined ? '' : `,"_meta":{"${RESULT_META.approval}":${JSON.stringify(approval)}}`
  return `{"resultType":"input_required","requestState":${JSON.stringify(requestState)}${meta}}`
}

/**
 * A call that waits for a person's approval executed nothing. Older MCP revisions have no word
 * for that: it is an error result carrying the pending approval and how to retry once approved.
 */
function approvalResult (approval: { readonly id: string }): string {
  const json = JSON.stringify(approval)
  const text = `This call needs a person's approval before it runs; nothing ran. Approval ${approval.id} is pending. Once it is approved, send the same call again with _meta {"${RESULT_META.approvalId}": "${approval.id}"} (or the Approval-Id header): it then runs once.`
  return `{"content":[{"type":"text","text":${JSON.stringify(text)}}],"isError":true,"_meta":{"${RESULT_META.approval}":${json}}}`
}

/** A failed call is a result the model can read: the same problem object REST answers (and the approval it ran under). */
function failedResult (problem: Record<string, unknown>, approvalId?: string): string {
  const json = JSON.stringify(problem)
  const approval = approvalId === undefined ? '' : `,"${RESULT_META.approvalId}":${JSON.stringify(approvalId)}`
  return `{"content":[{"type":"text","text":${JSON.stringify(json)}}],"isError":true,"_meta":{"${RESULT_META.problem}":${json}${approval}}}`
}
