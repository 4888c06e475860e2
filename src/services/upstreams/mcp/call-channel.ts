import type { ProgressUpdate } from '../../../core/progress.js'
import { progressListener } from './progress.js'
import { ProtocolError, SdkError, SdkErrorCode, specTypeSchemas, type CallToolResult, type JSONRPCMessage, type MessageExtraInfo, type Transport, type TransportSendOptions } from '@modelcontextprotocol/client'

/*
 * The transport under the SDK client, with `tools/call` of the 2025-11-25 era sent and answered
 * here. The client's request funnel (an output-schema cache lookup, header mirroring, the era
 * codec, a result probe that formats a zod error on every call, validation chained over
 * microtasks) cost the gateway more per call than the whole call costs the server. What a
 * call needs of it is kept: the result checked as that era's CallToolResult, a JSON-RPC error
 * as a ProtocolError, `notifications/cancelled` when the signal aborts, every call in flight
 * failed with ConnectionClosed when the transport closes. The client keeps all the rest (the
 * handshake, tools/list, list_changed, requests from the server, every 2026-07-28 call), and
 * sees every message but the answers to these calls. Our ids are strings, the client's are
 * numbers: they never collide.
 */

interface Pending {
  readonly resolve: (result: CallToolResult) => void
  readonly reject: (error: unknown) => void
  /** Told of the server's progress notifications naming this call's id as their token. */
  readonly onProgress: ((params: unknown) => void) | undefined
  /** Stops listening for the abort. */
  stop: () => void
}

/** Where a call's abort comes from: `onAbort` when there is one (no signal is made), else the signal; and who hears its progress. */
export interface CallAbort {
  readonly signal: AbortSignal
  readonly onAbort?: ((listener: (reason: Error) => void) => () => void) | undefined
  readonly onProgress?: ((update: ProgressUpdate) => void) | undefined
}

/** What the channel drops of a server's messages, for the connection to log. */
export type ServerFault = 'malformed progress' | 'progress for no call in flight'

const ONCE = Object.freeze({ once: true })
const noop = (): void => {}

function listen (call: CallAbort, listener: (reason: unknown) => void): () => void {
  if (call.onAbort !== undefined) return call.onAbort(listener)
  const { signal } = call
  if (signal.aborted) {
    listener(signal.reason)
    return noop
  }
  const aborted = (): void => { listener(signal.reason) }
  signal.addEventListener('abort', aborted, ONCE)
  return () => { signal.removeEventListener('abort', aborted) }
}

/** Keys of other result families: without `content`, such a body is not a tool result (as the SDK rules). */
const FOREIGN_FAMILY_KEYS = ['task', 'inputRequests', 'requestState']
const resultSchema = specTypeSchemas.CallToolResult['~standard']

export class CallChannel implements Transport {
  onclose?: () => void
  onerror?: (error: Error) => void
  onmessage?: (message: JSONRPCMessage, extra?: MessageExtraInfo) => void
  readonly #inner: Transport
  readonly #pending = new Map<string, Pending>()
  #next = 0

  readonly #onFault: (fault: ServerFault) => void

  constructor (inner: Transport, onFault: (fault: ServerFault) => void = noop) {
    this.#inner = inner
    this.#onFault = onFault
    inner.onmessage = (message, extra) => {
      if (this.#progress(message)) return
      const id = (message as { id?: unknown }).id
      const pending = typeof id === 'string' ? this.#pending.get(id) : undefined
      if (pending === undefined || 'method' in message) this.onmessage?.(message, extra)
      else this.#answer(id as string, pending, message)
    }
    inner.onerror = error => { this.onerror?.(error) }
    inner.onclose = () => {
      const closed = new SdkError(SdkErrorCode.ConnectionClosed, 'Connection closed')
      for (const [id, pending] of this.#pending) this.#settle(id, pending).reject(closed)
      this.onclose?.()
    }
  }

  /** The child's, for a stdio server. */
  get pid (): number | undefined { return (this.#inner as { pid?: number }).pid }
  get sessionId (): string | undefined { return this.#inner.sessionId }
  get hasPerRequestStream (): boolean | undefined { return this.#inner.hasPerRequestStream }
  async start (): Promise<void> { await this.#inner.start() }
  async send (message: JSONRPCMessage, options?: TransportSendOptions): Promise<void> { await this.#inner.send(message, options) }
  async close (): Promise<void> { await this.#inner.close() }
  setProtocolVersion (version: string): void { this.#inner.setProtocolVersion?.(version) }
  setSupportedProtocolVersions (versions: string[]): void { this.#inner.setSupportedProtocolVersions?.(versions) }

  /** `tools/call`; only for a connection that negotiated the 2025-11-25 era (its requests carry no envelope). */
  async callTool (params: { name: string, arguments: Record<string, unknown>, _meta?: Record<string, unknown> }, call: CallAbort): Promise<CallToolResult> {
    const id = `tg-${++this.#next}`
    const onProgress = progressListener(call.onProgress, () => { this.#onFault('malformed progress') })
    // The call's id is its progress token: the server's notifications find the call by it.
    const sentParams = onProgress === undefined ? params : { ...params, _meta: { ...params._meta, progressToken: id } }
    return await new Promise<CallToolResult>((resolve, reject) => {
      let sent = false
      const pending: Pending = { resolve, reject, onProgress, stop: noop }
      this.#pending.set(id, pending)
      const stop = listen(call, reason => {
        if (this.#pending.get(id) !== pending) return
        this.#settle(id, pending)
        if (sent) this.#inner.send({ jsonrpc: '2.0', method: 'notifications/cancelled', params: { requestId: id, reason: String(reason) } }).catch((error: unknown) => { this.onerror?.(new Error(`failed to send the cancellation: ${String(error)}`)) })
        reject(reason)
      })
      // Aborted already: nothing was sent, nothing to cancel.
      if (this.#pending.get(id) !== pending) return
      pending.stop = stop
      sent = true
      this.#inner.send({ jsonrpc: '2.0', id, method: 'tools/call', params: sentParams }).catch((error: unknown) => {
        if (this.#pending.get(id) === pending) this.#settle(id, pending).reject(error)
      })
    })
  }

  /**
   * A progress notification with a string token is for one of our calls (the client's tokens
   * are its numeric ids): handled here, never passed to the client. One for a call already
   * answered, or a token nobody issued, is dropped and reported (MCP: only an active request's token).
   */
  #progress (message: JSONRPCMessage): boolean {
    if (!('method' in message) || message.method !== 'notifications/progress' || 'id' in message) return false
    const token = (message.params as { progressToken?: unknown } | undefined)?.progressToken
    if (typeof token !== 'string') return false
    const pending = this.#pending.get(token)
    if (pending?.onProgress === undefined) this.#onFault('progress for no call in flight')
    else pending.onProgress(message.params)
    return true
  }

  #settle (id: string, pending: Pending): Pending {
    this.#pending.delete(id)
    pending.stop()
    return pending
  }

  #answer (id: string, pending: Pending, message: JSONRPCMessage): void {
    this.#settle(id, pending)
    if ('error' in message) {
      pending.reject(ProtocolError.fromError(message.error.code, message.error.message, message.error.data))
      return
    }
    const checked = resultOf((message as { result?: unknown }).result)
    if (typeof checked === 'string') pending.reject(new SdkError(SdkErrorCode.InvalidResult, `Invalid result for tools/call: ${checked}`))
    else pending.resolve(checked)
  }
}

/** The result as the 2025-11-25 wire defines it (as the SDK's codec reads it), or why it is not one. */
function resultOf (raw: unknown): CallToolResult | string {
  if (typeof raw !== 'object' || raw === null || Array.isArray(raw)) return 'not an object'
  let body = raw as Record<string, unknown>
  if ('resultType' in body) {
    const { resultType: _dropped, ...rest } = body
    body = rest
  }
  if (body.content === undefined && FOREIGN_FAMILY_KEYS.some(key => key in body)) return 'content is required in a tool result'
  const structured = body.structuredContent
  if (structured !== undefined && (typeof structured !== 'object' || structured === null || Array.isArray(structured))) return 'structuredContent must be an object'
  const outcome = resultSchema.validate(body) as { value?: CallToolResult, issues?: ReadonlyArray<{ message: string, path?: ReadonlyArray<unknown> }> }
  if (outcome.issues !== undefined) return outcome.issues.map(issue => `${(issue.path ?? []).join('.')}: ${issue.message}`).join('; ').slice(0, 500)
  return outcome.value!
}
