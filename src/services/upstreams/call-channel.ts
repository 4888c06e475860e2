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
  readonly signal: AbortSignal
  readonly aborted: () => void
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

  constructor (inner: Transport) {
    this.#inner = inner
    inner.onmessage = (message, extra) => {
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
  async callTool (params: { name: string, arguments: Record<string, unknown>, _meta?: Record<string, unknown> }, signal: AbortSignal): Promise<CallToolResult> {
    if (signal.aborted) throw signal.reason
    const id = `tg-${++this.#next}`
    return await new Promise<CallToolResult>((resolve, reject) => {
      const aborted = (): void => {
        this.#settle(id, pending)
        this.#inner.send({ jsonrpc: '2.0', method: 'notifications/cancelled', params: { requestId: id, reason: String(signal.reason) } }).catch((error: unknown) => { this.onerror?.(new Error(`failed to send the cancellation: ${String(error)}`)) })
        reject(signal.reason)
      }
      const pending: Pending = { resolve, reject, signal, aborted }
      this.#pending.set(id, pending)
      signal.addEventListener('abort', aborted, { once: true })
      this.#inner.send({ jsonrpc: '2.0', id, method: 'tools/call', params }).catch((error: unknown) => {
        if (this.#pending.get(id) === pending) this.#settle(id, pending).reject(error)
      })
    })
  }

  #settle (id: string, pending: Pending): Pending {
    this.#pending.delete(id)
    pending.signal.removeEventListener('abort', pending.aborted)
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
