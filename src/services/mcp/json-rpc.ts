/*
 * JSON-RPC 2.0 as MCP's Streamable HTTP carries it: one message per POST, no batches (the
 * 2025-06-18 revision removed them). Framework-free: the HTTP and stdio adapters share it.
 */

export type JsonRpcId = string | number

export const JSON_RPC = {
  parseError: -32700,
  invalidRequest: -32600,
  methodNotFound: -32601,
  invalidParams: -32602,
  internalError: -32603,
} as const

/** A request (with an id) or a notification (without), as read from the wire. */
export interface JsonRpcCall {
  readonly id?: JsonRpcId
  readonly method: string
  readonly params: Record<string, unknown>
}

/** What one inbound message is: a call, a reply the client sent us (ignored), or malformed. */
export type Inbound =
  | { readonly type: 'call', readonly call: JsonRpcCall }
  | { readonly type: 'reply' }
  | { readonly type: 'invalid', readonly id: JsonRpcId | null, readonly message: string }

export function classify (message: unknown): Inbound {
  if (typeof message !== 'object' || message === null || Array.isArray(message)) {
    return { type: 'invalid', id: null, message: Array.isArray(message) ? 'batches are not supported' : 'a JSON-RPC message is an object' }
  }
  const { jsonrpc, id, method, params } = message as Record<string, unknown>
  const validId = typeof id === 'string' || (typeof id === 'number' && Number.isFinite(id))
  if (jsonrpc !== '2.0') return { type: 'invalid', id: validId ? id : null, message: 'jsonrpc must be "2.0"' }
  if (method === undefined && validId && ('result' in message || 'error' in message)) return { type: 'reply' }
  if (typeof method !== 'string') return { type: 'invalid', id: validId ? id : null, message: 'method must be a string' }
  if (id !== undefined && !validId) return { type: 'invalid', id: null, message: 'id must be a string or a number' }
  if (params !== undefined && (typeof params !== 'object' || params === null || Array.isArray(params))) {
    return { type: 'invalid', id: validId ? id : null, message: 'params must be an object' }
  }
  return { type: 'call', call: { id: id as JsonRpcId | undefined, method, params: (params ?? {}) as Record<string, unknown> } }
}

/** The id of a message as sent, when it is a valid one (else `null`, as an error answer must then say). */
export function idOf (message: unknown): JsonRpcId | null {
  const id = (message as { id?: unknown } | null)?.id
  return typeof id === 'string' || (typeof id === 'number' && Number.isFinite(id)) ? id : null
}

/** A result message; `resultJson` is already JSON (tool outputs are serialized once, in the pipeline). */
export function resultText (id: JsonRpcId, resultJson: string): string {
  return `{"jsonrpc":"2.0","id":${JSON.stringify(id)},"result":${resultJson}}`
}

export function errorText (id: JsonRpcId | null, code: number, message: string, data?: unknown): string {
  return JSON.stringify({ jsonrpc: '2.0', id, error: data === undefined ? { code, message } : { code, message, data } })
}

/** A protocol error raised while handling a call: becomes a JSON-RPC error, never a tool result. */
export class JsonRpcError extends Error {
  constructor (readonly code: number, message: string, readonly data?: unknown, readonly httpStatus = 200) {
    super(message)
    this.name = 'JsonRpcError'
  }
}
