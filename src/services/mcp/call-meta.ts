import { readCallOptions, type CallOptionName, type CallOptions, type FoundOption } from '../../core/call-options.js'
import { GatewayError } from '../../core/errors.js'
import type { ProgressUpdate } from '../../core/progress.js'
import type { Elicit } from '../../core/elicitation.js'
import { JSON_RPC, JsonRpcError } from './json-rpc.js'

/** toolgate's namespace in `_meta`: what REST says with headers and query, and what a result says back. */
const NAMESPACE = 'dev.toolgate/'

/** Namespaced `_meta` keys of a `tools/call` request, each the spelling of one call option. */
const REQUEST_META: Readonly<Record<string, CallOptionName>> = {
  [`${NAMESPACE}idempotencyKey`]: 'idempotencyKey',
  [`${NAMESPACE}mode`]: 'mode',
  [`${NAMESPACE}dryRun`]: 'dryRun',
  [`${NAMESPACE}escalate`]: 'escalate',
  [`${NAMESPACE}approvalId`]: 'approvalId',
  // Seconds, as `Prefer: wait=N` says it.
  [`${NAMESPACE}wait`]: 'waitForApprovalMs',
}

/** Namespaced `_meta` keys of results. */
export const RESULT_META = {
  dryRun: `${NAMESPACE}dryRun`,
  problem: `${NAMESPACE}problem`,
  proposal: `${NAMESPACE}proposal`,
  replayed: `${NAMESPACE}replayed`,
  approvalId: `${NAMESPACE}approvalId`,
  approval: `${NAMESPACE}approval`,
  /** The limits that cover the call: what it spent (a dry run: would spend) of each, and what is left. */
  limits: `${NAMESPACE}limits`,
} as const

export interface McpCallOptions extends CallOptions {
  /** W3C trace context the client sent in `_meta` (`traceparent`, `tracestate`): the call's parent. */
  readonly carrier?: { readonly traceparent?: unknown, readonly tracestate?: unknown }
  /** The client asks for `notifications/progress` naming this token (MCP's `_meta.progressToken`). */
  readonly progressToken?: string | number
  /** Set by the protocol when it can tell the client of progress (see `McpCaller.notify`). */
  readonly onProgress?: (update: ProgressUpdate) => void
  /** Set by the protocol when the client can be asked a question (see `McpCaller.elicit`). */
  readonly onElicit?: Elicit
}

/**
 * The options of a `tools/call`: what the transport carries (HTTP's query and headers) and the
 * request's `_meta`, parsed by the core's one definition. Malformed, unknown in toolgate's
 * namespace, or given twice with two meanings: JSON-RPC's invalid params, naming each field.
 */
export function callOptionsOf (meta: unknown, transport: () => readonly FoundOption[]): McpCallOptions {
  try {
    if (meta !== undefined && (typeof meta !== 'object' || meta === null || Array.isArray(meta))) {
      throw new GatewayError('TOOLGATE_INVALID_INPUT', 'params._meta must be an object', { errors: [{ pointer: '/params/_meta', message: 'params._meta must be an object', code: 'invalid_type' }] })
    }
    const m = (meta ?? {}) as Record<string, unknown>
    const options: McpCallOptions = readCallOptions([...transport(), ...metaFound(m)])
    const progressToken = progressTokenOf(m.progressToken)
    const traced = typeof m.traceparent === 'string' ? { ...options, carrier: { traceparent: m.traceparent, tracestate: m.tracestate } } : options
    return progressToken === undefined ? traced : { ...traced, progressToken }
  } catch (error) {
    if (error instanceof GatewayError) throw new JsonRpcError(JSON_RPC.invalidParams, error.message, { errors: error.extensions.errors })
    throw error
  }
}

/** MCP: a progress token is a string or an integer. */
function progressTokenOf (token: unknown): string | number | undefined {
  if (token === undefined || typeof token === 'string' || Number.isSafeInteger(token)) return token as string | number | undefined
  const message = 'params._meta.progressToken must be a string or an integer'
  throw new GatewayError('TOOLGATE_INVALID_INPUT', message, { errors: [{ pointer: '/params/_meta/progressToken', message, code: 'invalid_type' }] })
}

function metaFound (meta: Record<string, unknown>): FoundOption[] {
  const found: FoundOption[] = []
  const unknown: string[] = []
  for (const key of Object.keys(meta)) {
    if (!key.startsWith(NAMESPACE)) continue
    const name = Object.hasOwn(REQUEST_META, key) ? REQUEST_META[key] : undefined
    if (name === undefined) unknown.push(key)
    else found.push({ name, form: 'json', raw: meta[key], pointer: pointerOf(key), label: `_meta["${key}"]` })
  }
  if (unknown.length > 0) {
    const known = Object.keys(REQUEST_META).join(', ')
    throw new GatewayError('TOOLGATE_INVALID_INPUT', `unknown option${unknown.length === 1 ? '' : 's'} in _meta: ${unknown.join(', ')}`, {
      errors: unknown.map(key => ({ pointer: pointerOf(key), message: `${key} is not an option of a call (${known})`, code: 'unknown_option' })),
    })
  }
  return found
}

function pointerOf (key: string): string {
  return `/params/_meta/${key.replaceAll('~', '~0').replaceAll('/', '~1')}`
}
