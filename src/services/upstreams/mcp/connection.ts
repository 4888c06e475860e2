import { Client, ProtocolError, SdkError, SdkErrorCode, type CallToolResult, type GetPromptResult, type ReadResourceResult, type Tool as McpToolInfo, type Transport, type VersionNegotiationMode, type jsonSchemaValidator } from '@modelcontextprotocol/client'
import { UpstreamError } from '../../../core/errors.js'
import { VERSION } from '../../version.js'
import { redact, type ServerConfig } from '../file.js'
import { CallChannel } from './call-channel.js'
import { progressListener } from './progress.js'
import { ElicitationRelay, type Ask } from './elicitation.js'
import { listFeatures, listPrompts, listResources, listTemplates, MAX_FEATURE_ITEMS, NO_FEATURES, type ServerFeatures } from './server-features.js'
import type { ProgressUpdate } from '../../../core/progress.js'
import { ChildTransport } from './stdio-transport.js'
import { asCaller, asGateway, remoteTransport } from './remote-transport.js'
import type { Principal } from '../../../core/app-context.js'
import { credentialWaitMs, type UpstreamCredential } from '../credentials/credential.js'
import { Slots } from '../slots.js'
import type { UpstreamLog, UpstreamState, UpstreamStatus } from '../status.js'

/*
 * One upstream MCP server, kept connected: a stdio child restarted when it exits, a remote
 * server reconnected when it drops, each with capped exponential backoff. While it is down its
 * tools stay in the catalog and their calls answer 503 with `Retry-After`. A call cut off
 * mid-way is retried once on the next connection only when its tool is read-only: anything else
 * may have taken effect, so its outcome is unknown and it is never sent twice.
 */

export interface ConnectionOptions {
  readonly log: UpstreamLog
  readonly maxMessageBytes: number
  /** The server's tool list, at every connection and every `list_changed`. */
  readonly onTools: (tools: readonly McpToolInfo[]) => void
  /** The server's resources, templates and prompts, at every connection and every `list_changed`. */
  readonly onFeatures?: (features: ServerFeatures) => void
  readonly onState?: (state: UpstreamState) => void
  /** Counted at every restart or reconnection attempt after the first. */
  readonly onRestart?: () => void
  /** How long one connection attempt (spawn, handshake, first tool list) may take. */
  readonly connectTimeoutMs?: number
  readonly backoff?: { readonly initialMs: number, readonly maxMs: number }
  /** A remote server's credential beyond its static headers (see credentials/). */
  readonly credential?: UpstreamCredential | undefined
  /** The gateway's tool timeout, for calls of tools without their own. */
  readonly toolTimeoutMs?: number
  /** A stdio server run once per person: its calls go to their own child (`PersonalChildren`), this one lists. */
  readonly personal?: Personal | undefined
}

/** Where a call of a server run once per person goes instead. */
interface Personal {
  readonly size: number
  run: <T>(call: UpstreamCall, send: (connection: UpstreamConnection) => Promise<T>) => Promise<T>
  close: () => Promise<void>
}

export interface UpstreamCall {
  /** May be a getter: it is read only when the call must wait, fails, or goes through the SDK client. */
  readonly signal: AbortSignal
  /** The same abort without a signal (`ToolContext.onAbort`): what a call that does not wait listens to. */
  readonly onAbort?: ((listener: (reason: Error) => void) => () => void) | undefined
  /** Read-only calls are retried once on a fresh connection when theirs dies mid-call. */
  readonly readOnly: boolean
  /** W3C trace context, sent in the request's `_meta`. */
  readonly trace?: { readonly traceparent: string, readonly tracestate?: string }
  /** Told of the server's `notifications/progress` for this call; absent, none is asked for (no `progressToken`). */
  readonly onProgress?: ((update: ProgressUpdate) => void) | undefined
  /** Asks the caller the server's questions during the call (`ctx.elicit`); absent, they are declined. */
  readonly onElicit?: Ask | undefined
  /** Whom the call is for: a remote server's credential is made for them. */
  readonly principal?: Principal | undefined
  /** The tool's own timeout, when it has one. */
  readonly timeoutMs?: number | undefined
}

/** Most tools one server may list: a server cannot grow the catalog without end. */
const MAX_TOOLS = 1_000
const ACCEPT_ALL: jsonSchemaValidator = { getValidator: (() => (data: unknown) => ({ valid: true, data, errorMessage: undefined })) as jsonSchemaValidator['getValidator'] }

/** JSON-RPC's invalid params, and MCP's "resource not found". */
const INVALID_PARAMS = -32602
const RESOURCE_NOT_FOUND = -32002

/** How long a read-only call cut off mid-way waits for a fresh connection to be retried on. */
const RETRY_WAIT_MS = 5_000
/** A connection that stayed up this long starts the next backoff from the beginning. */
const STABLE_MS = 10_000

export class UpstreamConnection {
  readonly config: ServerConfig
  readonly #options: ConnectionOptions
  readonly #slots: Slots
  #state: UpstreamState = 'starting'
  #since = Date.now()
  #client: Client | undefined
  /** The transport under `#client`, which answers the 2025-11-25 era's `tools/call` itself. */
  #channel: CallChannel | undefined
  #tools: readonly McpToolInfo[] = []
  #features: ServerFeatures = NO_FEATURES
  #restarts = 0
  #attempt = 0
  #nextAttemptAt = 0
  #timer: NodeJS.Timeout | undefined
  #lastError: string | undefined
  #upSince = 0
  #waiters = new Set<() => void>()
  #closing: Promise<void> | undefined
  /** The server's questions during a call, to that call's caller. */
  readonly #relay = new ElicitationRelay()
  /** The kinds of server fault already logged on this connection. */
  #faults = new Set<string>()

  constructor (config: ServerConfig, options: ConnectionOptions) {
    this.config = config
    this.#options = options
    this.#slots = new Slots(config.maxInFlight, config.maxQueue)
  }

  get state (): UpstreamState { return this.#state }
  /** How calls reach the server beyond the file's headers or environment. */
  get #auth (): UpstreamStatus['auth'] {
    return this.config.transport === 'stdio' ? this.config.perPerson?.auth.type : this.config.auth?.type
  }

  get tools (): readonly McpToolInfo[] { return this.#tools }
  get features (): ServerFeatures { return this.#features }

  /** Connect for the first time: resolves once it is up or its first attempt failed (it keeps trying). */
  async start (): Promise<void> {
    await this.#connect()
  }

  status (): UpstreamStatus {
    return {
      name: this.config.name,
      transport: this.config.transport,
      state: this.#state,
      required: this.config.required,
      tools: this.#tools.length,
      restarts: this.#restarts,
      inFlight: this.#slots.inFlight,
      since: this.#since,
      ...(this.#state === 'up' && this.#client?.getNegotiatedProtocolVersion() !== undefined ? { protocolVersion: this.#client.getNegotiatedProtocolVersion() } : {}),
      ...(this.#lastError === undefined || this.#state === 'up' ? {} : { lastError: this.#lastError }),
      ...(this.#auth === undefined ? {} : { auth: this.#auth }),
      ...(this.#options.personal === undefined ? {} : { children: this.#options.personal.size }),
    }
  }

  /** Call tool `name` of this server; answers its result or throws an `UpstreamError`. */
  async call (name: string, args: unknown, call: UpstreamCall): Promise<CallToolResult> {
    if (this.#options.personal !== undefined) return await this.#options.personal.run(call, async child => await child.call(name, args, call))
    return await this.#inSlot(call, name, async () => await this.#send(name, args, call))
  }

  /** `resources/read` on this server: its result as sent (the SDK checks its shape), or an `UpstreamError`. */
  async readResource (uri: string, call: UpstreamCall): Promise<ReadResourceResult> {
    if (this.#options.personal !== undefined) return await this.#options.personal.run(call, async child => await child.readResource(uri, call))
    return await this.#request(call, uri, async client => await client.readResource({ uri, ...(call.trace === undefined ? {} : { _meta: { ...call.trace } }) }, { signal: call.signal, timeout: 2 ** 31 - 1 }))
  }

  /** `prompts/get` on this server. */
  async getPrompt (name: string, args: Record<string, string>, call: UpstreamCall): Promise<GetPromptResult> {
    if (this.#options.personal !== undefined) return await this.#options.personal.run(call, async child => await child.getPrompt(name, args, call))
    return await this.#request(call, name, async client => await client.getPrompt({ name, arguments: args, ...(call.trace === undefined ? {} : { _meta: { ...call.trace } }) }, { signal: call.signal, timeout: 2 ** 31 - 1 }))
  }

  /**
   * One request in one of the server's slots. A connection lost under it: a read-only one
   * changed nothing and is sent once more on the next connection; any other may have taken
   * effect, so its outcome is unknown and it is never sent twice. `send` maps every other failure.
   */
  async #inSlot<T> (call: UpstreamCall, what: string, send: () => Promise<T>): Promise<T> {
    if (this.#options.credential === undefined) return await this.#sendInSlot(call, what, send)
    // Every request of this call carries the caller's credential, made where it goes out.
    return await asCaller({ principal: call.principal, waitMs: credentialWaitMs(call.timeoutMs ?? this.#options.toolTimeoutMs ?? 30_000) }, async () => await this.#sendInSlot(call, what, send))
  }

  async #sendInSlot<T> (call: UpstreamCall, what: string, send: () => Promise<T>): Promise<T> {
    const release = await this.#slots.acquire(call, this.config.name)
    try {
      try {
        return await send()
      } catch (error) {
        if (!isConnectionLoss(error) || call.signal.aborted) throw error
        if (!call.readOnly) throw outcomeUnknown(this.config.name, error)
        this.#log('warn', { err: error, tool: what }, 'the connection dropped during a read-only call; retrying it once on a fresh connection')
        if (!await this.#whenUp(call.signal, RETRY_WAIT_MS)) throw this.#unavailable()
        try {
          return await send()
        } catch (again) {
          throw isConnectionLoss(again) && !call.signal.aborted ? upstreamFailed(this.config.name, again) : again
        }
      }
    } finally {
      release()
    }
  }

  /** A request other than a tool call (a read, a get): its failures as the caller's errors, a lost connection left to `#inSlot`. */
  async #request<T> (call: UpstreamCall, what: string, send: (client: Client) => Promise<T>): Promise<T> {
    return await this.#inSlot(call, what, async () => await this.#sendRequest(call, send).catch((error: unknown) => {
      throw isConnectionLoss(error) && !call.signal.aborted ? error : this.#requestFailure(error, call)
    }))
  }

  async #sendRequest<T> (call: UpstreamCall, send: (client: Client) => Promise<T>): Promise<T> {
    const client = this.#client
    if (this.#state !== 'up' || client === undefined) throw this.#unavailable()
    try {
      return await send(client)
    } catch (error) {
      if (!call.signal.aborted && isConnectionLoss(error)) this.#lost(client, error)
      throw error
    }
  }

  #requestFailure (error: unknown, call: UpstreamCall): unknown {
    if (call.signal.aborted || error instanceof UpstreamError) return error
    if (SdkError.isInstance(error) && error.code === SdkErrorCode.InvalidResult) {
      return new UpstreamError('TOOLGATE_INVALID_OUTPUT', `upstream "${this.config.name}" answered something that is not a result of its kind`, {}, { cause: error })
    }
    if (error instanceof ProtocolError) {
      // The server's own "no such resource" (-32002), and its invalid params (a prompt's name or arguments): the caller's to fix.
      const said = `upstream "${this.config.name}": ${this.#redact(error.message).slice(0, 500)}`
      if (error.code === RESOURCE_NOT_FOUND) return new UpstreamError('TOOLGATE_NOT_FOUND', said, { upstream: this.config.name })
      if (error.code === INVALID_PARAMS) return new UpstreamError('TOOLGATE_INVALID_INPUT', said, { upstream: this.config.name })
      return new UpstreamError('TOOLGATE_UPSTREAM_FAILED', `upstream "${this.config.name}" refused the request: ${this.#redact(error.message).slice(0, 500)}`)
    }
    return upstreamFailed(this.config.name, error)
  }

  async #send (name: string, args: unknown, call: UpstreamCall): Promise<CallToolResult> {
    const client = this.#client
    const channel = this.#channel
    if (this.#state !== 'up' || client === undefined || channel === undefined) throw this.#unavailable()
    const request = { name, arguments: args as Record<string, unknown>, ...(call.trace === undefined ? {} : { _meta: { ...call.trace } }) }
    try {
      // The pipeline's hard timeout aborts the call (through onAbort, or the signal), and notifications/cancelled goes out.
      if (client.getProtocolEra() === 'legacy') return await this.#relay.run(call.onElicit, async () => await channel.callTool(request, call))
      const onprogress = progressListener(call.onProgress, () => { this.#fault('malformed progress') })
      return await this.#relay.run(call.onElicit, async () => await client.callTool(request, { signal: call.signal, timeout: 2 ** 31 - 1, ...(onprogress === undefined ? {} : { onprogress }) }) as CallToolResult)
    } catch (error) {
      // The signal first; then the caller's own errors as they are (a credential refused, a token endpoint down).
      if (call.signal.aborted || error instanceof UpstreamError) throw error
      if (isConnectionLoss(error)) {
        this.#lost(client, error)
        throw error
      }
      if (SdkError.isInstance(error) && error.code === SdkErrorCode.InvalidResult) {
        throw new UpstreamError('TOOLGATE_INVALID_OUTPUT', `upstream "${this.config.name}" answered something that is not a tool result`, {}, { cause: error })
      }
      if (error instanceof ProtocolError) throw new UpstreamError('TOOLGATE_UPSTREAM_FAILED', `upstream "${this.config.name}" refused the call: ${this.#redact(error.message).slice(0, 500)}`)
      throw upstreamFailed(this.config.name, error)
    }
  }

  #unavailable (): UpstreamError {
    const wait = Math.max(1, Math.ceil((this.#nextAttemptAt - Date.now()) / 1000))
    return new UpstreamError('TOOLGATE_UPSTREAM_UNAVAILABLE', `upstream "${this.config.name}" is ${this.#state === 'starting' ? 'starting' : 'down'}; retry after ${wait} s`, { retryAfter: wait, upstream: this.config.name })
  }

  /** True once connected again, false after `ms` (a server that stays down: 503 now, not a wait until the timeout). */
  async #whenUp (signal: AbortSignal, ms: number): Promise<boolean> {
    if (this.#state === 'up') return true
    return await new Promise<boolean>((resolve, reject) => {
      const cleanup = (): void => {
        clearTimeout(timer)
        signal.removeEventListener('abort', aborted)
        this.#waiters.delete(done)
      }
      const settle = (up: boolean): void => { cleanup(); resolve(up) }
      const done = (): void => { settle(true) }
      const aborted = (): void => { cleanup(); reject(signal.reason as unknown) }
      const timer = setTimeout(() => { settle(false) }, ms)
      this.#waiters.add(done)
      signal.addEventListener('abort', aborted, { once: true })
    })
  }

  async #connect (): Promise<void> {
    if (this.#state === 'closed') return
    const transport = new CallChannel(this.#transport(), fault => { this.#fault(fault) })
    const client = new Client({ name: 'toolgate', version: VERSION }, {
      // A server may ask a call's caller a question (relayed where the caller can answer, else
      // declined at once). Sampling and roots are not offered: deprecated in 2026-07-28, and the
      // gateway has no model or folders of a caller's to give.
      capabilities: { elicitation: { form: {} } },
      // Structured content is checked by the tool's parseOutput, like every tool's output (502 TOOLGATE_INVALID_OUTPUT): not twice.
      jsonSchemaValidator: ACCEPT_ALL,
      versionNegotiation: { mode: negotiationOf(this.config.protocol) },
      listChanged: {
        // Refreshed here, every page: the SDK's own refresh reads the first page only.
        // Each refreshed as the gateway: the notification may come on a caller's stream.
        prompts: { autoRefresh: false, onChanged: () => { if (client === this.#client) void asGateway(async () => { await this.#refreshFeatures(client, 'prompts') }) } },
        resources: { autoRefresh: false, onChanged: () => { if (client === this.#client) void asGateway(async () => { await this.#refreshFeatures(client, 'resources') }) } },
        tools: { autoRefresh: false, onChanged: () => { if (client === this.#client) void asGateway(async () => { await this.#refreshTools(client) }) } },
      },
    })
    client.setRequestHandler('elicitation/create', this.#relay.handle)
    this.#client = client
    this.#channel = transport
    this.#faults = new Set()
    const timeout = this.#options.connectTimeoutMs ?? 30_000
    try {
      await withTimeout(client.connect(transport, { timeout }), timeout, 'connecting')
      const tools = await withTimeout(this.#listTools(client), timeout, 'listing its tools')
      const failed = (kind: string, error: unknown): void => { this.#log('warn', { err: error }, `listing the server's ${kind} failed; serving the rest without them`) }
      // The tools serve without them: a server whose listing of resources fails is no server down.
      const features = await withTimeout(listFeatures(client, kind => { this.#truncated(kind) }, failed), timeout, 'listing its resources and prompts').catch((error: unknown) => {
        failed('resources and prompts', error)
        return NO_FEATURES
      })
      if (this.#closed() || this.#client !== client) {
        await client.close().catch(() => undefined)
        return
      }
      client.onclose = () => { this.#lost(client, new Error('the connection closed')) }
      // The client's complaints about what the server sent (a notification it cannot parse, progress for a request it no longer has).
      client.onerror = error => { this.#fault(error.message.split(':')[0]!.slice(0, 100)) }
      this.#attempt = 0
      this.#upSince = Date.now()
      this.#lastError = undefined
      this.#setState('up')
      this.#setTools(tools)
      this.#setFeatures(features)
      this.#log('info', { tools: tools.length, protocolVersion: client.getNegotiatedProtocolVersion(), childPid: transport.pid }, 'upstream connected')
      for (const waiter of [...this.#waiters]) waiter()
    } catch (error) {
      await client.close().catch(() => undefined)
      if (this.#client === client) this.#client = undefined
      if (this.#closed()) return
      this.#lastError = this.#redact(error instanceof Error ? error.message : String(error)).slice(0, 500)
      this.#setState('down')
      this.#retry()
    }
  }

  async #listTools (client: Client): Promise<McpToolInfo[]> {
    const { tools } = await client.listTools()
    if (tools.length > MAX_TOOLS) throw new Error(`the server lists ${tools.length} tools; at most ${MAX_TOOLS} are taken from one server`)
    return tools
  }

  #transport (): Transport {
    const { config } = this
    if (config.transport !== 'stdio') return remoteTransport(config, this.#options.maxMessageBytes, this.#options.credential, this.#options.connectTimeoutMs)
    return new ChildTransport(config, {
      maxMessageBytes: this.#options.maxMessageBytes,
      stderr: line => { this.#options.log.info({ upstream: config.name, stderr: this.#redact(line) }, 'upstream stderr') },
      exited: (code, signal) => { if (this.#state !== 'closed') this.#log('warn', { code, signal }, 'upstream process exited') },
    })
  }

  #setTools (tools: readonly McpToolInfo[]): void {
    if (tools.length > MAX_TOOLS) {
      this.#log('error', { tools: tools.length }, `the server lists more than ${MAX_TOOLS} tools; keeping the tools it had`)
      return
    }
    this.#tools = Object.freeze([...tools])
    this.#options.onTools(this.#tools)
  }

  /** The connection broke (the child exited, the stream broke, the server went away): try again later. */
  #lost (client: Client, error: unknown): void {
    if (this.#client !== client || this.#state === 'closed') return
    this.#client = undefined
    void client.close().catch(() => undefined)
    if (Date.now() - this.#upSince >= STABLE_MS) this.#attempt = 0
    this.#lastError = this.#redact(error instanceof Error ? error.message : String(error)).slice(0, 500)
    this.#setState('down')
    this.#log('warn', { reason: this.#lastError }, 'upstream connection lost')
    this.#retry()
  }

  #retry (): void {
    if (this.#state === 'closed' || this.#timer !== undefined) return
    const { initialMs, maxMs } = this.#options.backoff ?? { initialMs: 250, maxMs: 30_000 }
    const base = Math.min(maxMs, initialMs * 2 ** this.#attempt)
    // Jitter: replicas restarting the same server do not retry in lockstep.
    const delay = Math.round(base * (0.8 + Math.random() * 0.4))
    this.#attempt++
    this.#nextAttemptAt = Date.now() + delay
    // As the gateway: the loss may have been noticed during a caller's request.
    this.#timer = asGateway(() => setTimeout(() => {
      this.#timer = undefined
      this.#restarts++
      this.#options.onRestart?.()
      void this.#connect()
    }, delay))
    this.#timer.unref()
  }

  /** Read again after every await: `close` may have run meanwhile. */
  #closed (): boolean {
    return this.#state === 'closed'
  }

  #setState (state: UpstreamState): void {
    if (this.#state === state) return
    this.#state = state
    this.#since = Date.now()
    this.#options.onState?.(state)
  }

  async #refreshTools (client: Client): Promise<void> {
    try {
      const tools = await this.#listTools(client)
      if (client === this.#client) this.#setTools(tools)
    } catch (error) {
      this.#log('warn', { err: error }, 'the server said its tools changed, but listing them failed; keeping the tools it had')
    }
  }

  async #refreshFeatures (client: Client, kind: 'prompts' | 'resources'): Promise<void> {
    const onTruncated = (what: string): void => { this.#truncated(what) }
    try {
      const features = kind === 'prompts'
        ? { ...this.#features, prompts: await listPrompts(client, onTruncated) }
        : { ...this.#features, resources: await listResources(client, onTruncated), templates: await listTemplates(client, onTruncated).catch(() => this.#features.templates) }
      if (client === this.#client) this.#setFeatures(features)
    } catch (error) {
      this.#log('warn', { err: error }, `the server said its ${kind} changed, but listing them failed; keeping the ones it had`)
    }
  }

  #setFeatures (features: ServerFeatures): void {
    this.#features = features
    this.#options.onFeatures?.(features)
  }

  #truncated (kind: string): void {
    this.#fault(`more ${kind} than the ${MAX_FEATURE_ITEMS} taken from one server`)
  }

  /**
   * A message of the server's that the gateway dropped: logged once per kind and connection
   * (a server that sends a bad notification per item would flood the log otherwise); the
   * connection and the calls in flight carry on.
   */
  #fault (fault: string): void {
    if (this.#faults.has(fault)) return
    this.#faults.add(fault)
    this.#log('warn', { fault: this.#redact(fault) }, 'dropped a message of the server\'s (logged once per kind and connection)')
  }

  #log (level: 'info' | 'warn' | 'error', object: object, message: string): void {
    this.#options.log[level]({ upstream: this.config.name, ...object }, message)
  }

  /** Any value the file took from the environment (or gave a child) is a credential: never in a message. */
  #redact (text: string): string {
    return redact(text, this.config.secrets)
  }

  /** Stop: no more restarts, the child (and its group) stopped, calls in flight cut off. */
  async close (): Promise<void> {
    this.#closing ??= (async () => {
      this.#setState('closed')
      clearTimeout(this.#timer)
      this.#timer = undefined
      const client = this.#client
      this.#client = undefined
      await Promise.all([client?.close().catch(() => undefined), this.#options.personal?.close()])
    })()
    await this.#closing
  }
}

function negotiationOf (protocol: ServerConfig['protocol']): VersionNegotiationMode {
  if (protocol === 'auto') return 'auto'
  return protocol === '2025-11-25' ? 'legacy' : { pin: protocol }
}

/** The connection went away under the request: the server may or may not have seen it. */
function isConnectionLoss (error: unknown): boolean {
  if (SdkError.isInstance(error)) return error.code === SdkErrorCode.ConnectionClosed || error.code === SdkErrorCode.NotConnected || error.code === SdkErrorCode.SendFailed
  // fetch's network failures (a remote server that went away).
  return error instanceof TypeError && /fetch failed|network|socket/i.test(error.message)
}

function outcomeUnknown (server: string, cause: unknown): UpstreamError {
  return new UpstreamError('TOOLGATE_UPSTREAM_FAILED', `the connection to upstream "${server}" was lost during the call; it may or may not have taken effect: check before retrying`, { outcome: 'unknown' }, { cause })
}

function upstreamFailed (server: string, cause: unknown): UpstreamError {
  return new UpstreamError('TOOLGATE_UPSTREAM_FAILED', `upstream "${server}" failed to answer the call`, {}, { cause })
}

async function withTimeout<T> (promise: Promise<T>, ms: number, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined
  try {
    return await Promise.race([promise, new Promise<never>((_resolve, reject) => { timer = setTimeout(() => { reject(new Error(`timed out ${what} after ${ms} ms`)) }, ms) })])
  } finally {
    clearTimeout(timer)
  }
}
