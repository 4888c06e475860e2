import type { Outcome } from './outcome.js'

/**
 * The one catalogue of error codes. Every failure the gateway itself produces has a code here,
 * with the HTTP status it maps to, a title and a one-line "how to solve". The error table of
 * docs/errors.md is generated from this object, so the two cannot drift.
 *
 * Two families never mix: `GatewayError` is the gateway speaking (bad input, unknown tool,
 * denied, timed out); `ToolError` is a tool failing on purpose with its own status and code.
 */
export const ERROR_PREFIX = 'TOOLGATE_'

interface CatalogueEntry {
  readonly status: number
  /** The `outcome` metrics label of a call that ends with this code. */
  readonly outcome: Outcome
  readonly title: string
  readonly solve: string
}

export const ERRORS = {
  TOOLGATE_UNAUTHENTICATED: { status: 401, outcome: 'unauthenticated', title: 'Authentication required', solve: 'Send a valid API key (`X-Api-Key` or `Authorization: Bearer`).' },
  TOOLGATE_FORBIDDEN: { status: 403, outcome: 'forbidden', title: 'Forbidden', solve: 'Ask for a principal whose scopes and rules allow this tool.' },
  TOOLGATE_DENIED: { status: 403, outcome: 'forbidden', title: 'Denied by the tool', solve: 'The tool\'s own authorize check refused this input; read `detail`.' },
  TOOLGATE_PLAN_MODE: { status: 403, outcome: 'forbidden', title: 'Refused in plan mode', solve: 'Plan mode runs read-only tools only; drop plan mode to call this tool.' },
  TOOLGATE_ESCALATION_UNSUPPORTED: { status: 400, outcome: 'invalid_input', title: 'Escalation not supported', solve: 'This tool does not declare `supportsEscalation`; call it without escalation.' },
  TOOLGATE_APPROVAL_PENDING: { status: 409, outcome: 'conflict', title: 'Approval pending', solve: 'Nobody has decided this approval yet; retry after `Retry-After`, or send `Prefer: wait=N` to wait for it.' },
  TOOLGATE_APPROVAL_REJECTED: { status: 403, outcome: 'forbidden', title: 'Approval rejected', solve: 'An approver said no; read `note`. Ask again with a new call if things changed.' },
  TOOLGATE_APPROVAL_EXPIRED: { status: 410, outcome: 'forbidden', title: 'Approval expired', solve: 'Nobody decided in time, or the approval was not used in time; send the call again without `Approval-Id` to ask anew.' },
  TOOLGATE_APPROVAL_NOT_FOUND: { status: 404, outcome: 'not_found', title: 'Approval not found', solve: 'Check the `Approval-Id`; settled approvals are forgotten after a while.' },
  TOOLGATE_APPROVAL_NOT_YOURS: { status: 403, outcome: 'forbidden', title: 'Approval of another principal', solve: 'An approval is bound to the principal who asked for it; use your own.' },
  TOOLGATE_APPROVAL_MISMATCH: { status: 422, outcome: 'conflict', title: 'Approval for another call', solve: 'The approval was given for another tool, input or escalation; re-send exactly the approved call.' },
  TOOLGATE_APPROVAL_USED: { status: 409, outcome: 'conflict', title: 'Approval already used', solve: 'This approval ran its call once and its stored answer is gone; ask for a new approval.' },
  TOOLGATE_APPROVAL_DECIDED: { status: 409, outcome: 'conflict', title: 'Approval already decided', solve: 'Someone decided this approval already (or it expired); `GET /approvals/{id}` shows how.' },
  TOOLGATE_APPROVAL_UNDECIDABLE: { status: 403, outcome: 'forbidden', title: 'Approval cannot be given here', solve: 'The call needs a person\'s approval and nobody can decide it where it was made (`toolgate mcp` without `REDIS_URL`); share the Redis of a gateway whose approvals page people use, or call through that gateway.' },
  TOOLGATE_SELF_APPROVAL: { status: 403, outcome: 'forbidden', title: 'Self-approval refused', solve: 'Nobody decides their own request; another approver must.' },
  TOOLGATE_TOO_MANY_APPROVALS: { status: 429, outcome: 'rate_limited', title: 'Too many pending approvals', solve: 'Wait for pending approvals to be decided or expire (`Retry-After`), or raise the approval limits.' },
  TOOLGATE_NOT_FOUND: { status: 404, outcome: 'not_found', title: 'Not found', solve: 'Check the URL or tool id; `GET /tools` lists what you may call.' },
  TOOLGATE_BUNDLE_NOT_FOUND: { status: 404, outcome: 'not_found', title: 'No such bundle', solve: 'Check the bundle\'s name; `GET /bundles` lists the bundles you may use (one you may not use is not listed, and answers this too).' },
  TOOLGATE_METHOD_NOT_ALLOWED: { status: 405, outcome: 'not_found', title: 'Method not allowed', solve: 'Use one of the methods in the `Allow` header.' },
  TOOLGATE_INVALID_INPUT: { status: 400, outcome: 'invalid_input', title: 'Invalid input', solve: 'Fix each entry of `errors`; the tool\'s input schema is in `GET /tools/{id}`.' },
  TOOLGATE_INPUT_TOO_COMPLEX: { status: 400, outcome: 'invalid_input', title: 'Input too deep or too wide', solve: 'Send a flatter input: at most `MAX_INPUT_DEPTH` levels, `MAX_INPUT_KEYS` keys per object and `MAX_INPUT_ITEMS` items per array (64, 10,000 and 100,000 by default).' },
  TOOLGATE_MALFORMED_REQUEST: { status: 400, outcome: 'invalid_input', title: 'Malformed request', solve: 'Send a well-formed JSON body (no `__proto__` or `constructor.prototype` keys).' },
  TOOLGATE_DRY_RUN_REJECTED: { status: 422, outcome: 'tool_error', title: 'Dry run rejected', solve: 'The tool\'s `resolve` refused this input; read `detail`.' },
  TOOLGATE_PAYLOAD_TOO_LARGE: { status: 413, outcome: 'invalid_input', title: 'Payload too large', solve: 'Send a smaller body or raise `BODY_LIMIT`.' },
  TOOLGATE_REQUEST_TIMEOUT: { status: 408, outcome: 'invalid_input', title: 'Request timeout', solve: 'Send the headers within `HEADERS_TIMEOUT_MS` and the whole request within `REQUEST_TIMEOUT_MS`.' },
  TOOLGATE_HEADERS_TOO_LARGE: { status: 431, outcome: 'invalid_input', title: 'Request headers too large', solve: 'Send fewer or smaller headers (16 KiB in all).' },
  TOOLGATE_UNSUPPORTED_MEDIA_TYPE: { status: 415, outcome: 'invalid_input', title: 'Unsupported media type', solve: 'Send `Content-Type: application/json`.' },
  TOOLGATE_CONFLICT: { status: 409, outcome: 'conflict', title: 'Conflict', solve: 'A call with this idempotency key is still running (or its outcome is still unknown); retry after `Retry-After`.' },
  TOOLGATE_IDEMPOTENCY_MISMATCH: { status: 422, outcome: 'conflict', title: 'Idempotency key reused', solve: 'This key was used with another input; use a new key for a new call.' },
  TOOLGATE_IDEMPOTENCY_KEY_REQUIRED: { status: 400, outcome: 'invalid_input', title: 'Idempotency key required', solve: 'This tool requires an `Idempotency-Key` header; send a new unique key per intended call.' },
  TOOLGATE_INVALID_IDEMPOTENCY_KEY: { status: 400, outcome: 'invalid_input', title: 'Invalid idempotency key', solve: 'Send 1 to 255 visible ASCII characters, e.g. a UUID.' },
  TOOLGATE_QUEUE_FULL: { status: 429, outcome: 'rate_limited', title: 'Too many queued calls', solve: 'Wait `Retry-After` seconds, or spread calls over sessions.' },
  TOOLGATE_IDEMPOTENCY_QUOTA: { status: 429, outcome: 'rate_limited', title: 'Idempotency share used up', solve: 'Your idempotency records fill your share of the store; wait `Retry-After` for older ones to expire.' },
  TOOLGATE_RATE_LIMITED: { status: 429, outcome: 'rate_limited', title: 'Rate limited', solve: 'Wait `Retry-After` seconds before calling again.' },
  TOOLGATE_LIMIT_EXCEEDED: { status: 429, outcome: 'rate_limited', title: 'Limit reached', solve: 'A rate, quota or budget that covers this call is used up (`limit` names it); retry after `Retry-After`. `GET /limits` shows what is left.' },
  TOOLGATE_LIMIT_TOO_LARGE: { status: 422, outcome: 'invalid_input', title: 'Call larger than its limit', solve: 'This one call spends more than its budget allows in a whole window (`limit` names it); it can never run as it is: split it, or ask the operator.' },
  TOOLGATE_LIMIT_AMOUNT_INVALID: { status: 400, outcome: 'invalid_input', title: 'Amount cannot be counted', solve: 'A budget that covers this tool could not read a number >= 0 from this input (`limit` names it and `detail` says why); nothing ran and nothing was charged.' },
  TOOLGATE_CANCELLED: { status: 499, outcome: 'cancelled', title: 'Cancelled', solve: 'The caller went away or aborted; a non-read-only call may have taken effect.' },
  TOOLGATE_INTERNAL: { status: 500, outcome: 'internal', title: 'Internal error', solve: 'A gateway defect; report it with the `X-Request-Id`.' },
  TOOLGATE_TOOL_BAD_DEFINITION: { status: 500, outcome: 'bad_definition', title: 'Tool defect', solve: 'The tool broke its contract (e.g. `authorize` returned a value); fix the tool.' },
  TOOLGATE_TOOL_FAILED: { status: 500, outcome: 'tool_failed', title: 'Tool failed', solve: 'The tool threw an unexpected error; its log line carries the request id.' },
  TOOLGATE_UPSTREAM_TOOL_ERROR: { status: 502, outcome: 'tool_error', title: 'Upstream tool failed', solve: 'The upstream MCP tool ran and reported an error (`isError`); its text is in `detail`.' },
  TOOLGATE_CREDENTIAL_NOT_EXCHANGEABLE: { status: 403, outcome: 'forbidden', title: 'No token to act on your behalf', solve: 'This tool\'s upstream is reached on behalf of the caller, by exchanging the caller\'s token at the issuer; call with a bearer JWT of the gateway\'s issuer, not an API key.' },
  TOOLGATE_LINK_REQUIRED: { status: 403, outcome: 'forbidden', title: 'Account not linked', solve: 'This tool\'s upstream is reached with your own account there: open `linkUrl` (the gateway\'s connections page), link it once, then retry. `link` says whether it was never linked or broke.' },
  TOOLGATE_CREDENTIAL_REFUSED: { status: 403, outcome: 'forbidden', title: 'Token not exchanged', solve: 'The issuer would not exchange your token for one for this tool\'s upstream (`detail` says why); sign in again, or ask for the access the upstream needs.' },
  TOOLGATE_UPSTREAM_CREDENTIAL_FAILED: { status: 502, outcome: 'tool_failed', title: 'Upstream credential refused', solve: 'The issuer refused the gateway\'s own client for this tool\'s upstream (its client id, secret, scope or audience); the operator fixes the upstream\'s `auth` in the upstreams file.' },
  TOOLGATE_UPSTREAM_UNAUTHORIZED: { status: 502, outcome: 'tool_failed', title: 'Upstream refused the credential', solve: 'The upstream answered 401 to a credential the gateway had just obtained for it; nothing ran there and the token was dropped. The operator checks the audience and scopes the upstream expects.' },
  TOOLGATE_UPSTREAM_FAILED: { status: 502, outcome: 'tool_failed', title: 'Upstream failed', solve: 'The upstream MCP server or HTTP service refused the call, failed, broke its protocol or lost the connection; if `outcome` is `unknown`, check state before retrying.' },
  TOOLGATE_INVALID_OUTPUT: { status: 502, outcome: 'invalid_output', title: 'Invalid tool output', solve: 'The tool returned a value its output schema rejects; fix the tool.' },
  TOOLGATE_UNAVAILABLE: { status: 503, outcome: 'unavailable', title: 'Unavailable', solve: 'The gateway is shutting down or overloaded; retry after `Retry-After`.' },
  TOOLGATE_UPSTREAM_UNAVAILABLE: { status: 503, outcome: 'unavailable', title: 'Upstream unavailable', solve: 'The upstream MCP server or HTTP service of this tool is down, restarting or unreachable; retry after `Retry-After`.' },
  TOOLGATE_CREDENTIAL_UNAVAILABLE: { status: 503, outcome: 'unavailable', title: 'Upstream credential unavailable', solve: 'The token endpoint for this tool\'s upstream is down or slow; nothing was sent upstream. Retry after `Retry-After`.' },
  TOOLGATE_STORE_UNAVAILABLE: { status: 503, outcome: 'unavailable', title: 'State store unavailable', solve: 'The idempotency or rate-limit store cannot be reached; retry after `Retry-After`.' },
  TOOLGATE_OVERLOADED: { status: 503, outcome: 'unavailable', title: 'Overloaded', solve: 'The gateway is under memory or event-loop pressure; retry after `Retry-After`.' },
  TOOLGATE_QUEUE_TIMEOUT: { status: 503, outcome: 'unavailable', title: 'Queue wait too long', solve: 'The session is busy; retry after `Retry-After` or use another session.' },
  TOOLGATE_TIMEOUT: { status: 504, outcome: 'timeout', title: 'Tool timed out', solve: 'The tool exceeded its `timeoutMs`; if `outcome` is `unknown`, check state before retrying.' },
} as const satisfies Record<string, CatalogueEntry>

export type ErrorCode = keyof typeof ERRORS

/** One entry of a 400's `errors` list: what is wrong and where, as a JSON pointer. */
export interface InputIssue {
  readonly pointer: string
  readonly message: string
  readonly code: string
}

export interface ToolgateErrorOptions extends ErrorOptions {
  readonly replayed?: boolean
}

/** Shared shape of both families, enough to render problem+json. */
export abstract class ToolgateError extends Error {
  abstract readonly family: 'gateway' | 'tool'
  abstract readonly code: string
  abstract readonly status: number
  /** Extra problem+json members (e.g. `errors`, `outcome`, `retryAfter`). */
  readonly extensions: Readonly<Record<string, unknown>>
  /** True when this is a stored answer replayed for a repeated idempotency key. */
  readonly replayed: boolean

  constructor (message: string, extensions: Record<string, unknown> = {}, options?: ToolgateErrorOptions) {
    super(message, options)
    this.extensions = extensions
    this.replayed = options?.replayed === true
  }
}

/** A failure the gateway itself reports; its code is from {@link ERRORS}. */
export class GatewayError extends ToolgateError {
  readonly family = 'gateway' as const
  readonly code: ErrorCode
  readonly status: number

  constructor (code: ErrorCode, detail?: string, extensions?: Record<string, unknown>, options?: ToolgateErrorOptions) {
    super(detail ?? ERRORS[code].title, extensions, options)
    this.name = 'GatewayError'
    this.code = code
    this.status = ERRORS[code].status
  }

  get title (): string { return ERRORS[this.code].title }
}

/**
 * A gateway error a fronted tool raises from `execute` on its upstream's behalf (down, busy,
 * broke the protocol, reported an error): it reaches the caller as it is, where anything else
 * a tool throws that is not a `ToolError` is a 500 with no internals.
 */
export class UpstreamError extends GatewayError {
  constructor (code: ErrorCode, detail?: string, extensions?: Record<string, unknown>, options?: ToolgateErrorOptions) {
    super(code, detail, extensions, options)
    this.name = 'UpstreamError'
  }
}

/** What a tool's own error code may be: upper snake case, never the gateway's prefix. */
export const TOOL_CODE = /^[A-Z][A-Z0-9_]{0,63}$/

/** Whether `code` may be a tool's own error code (see {@link TOOL_CODE}). */
export function isToolCode (code: unknown): code is string {
  return typeof code === 'string' && TOOL_CODE.test(code) && !code.startsWith(ERROR_PREFIX)
}

/**
 * What a tool throws to fail on purpose. Its status and code reach the caller as they are;
 * its message becomes the problem's `detail`, so write it for the caller.
 *
 * @example
 * import { ToolError } from 'toolgate'
 * function debit (balance: number, amount: number): number {
 *   if (amount > balance) throw new ToolError(409, 'INSUFFICIENT_FUNDS', 'The balance is too low.')
 *   return balance - amount
 * }
 */
export class ToolError extends ToolgateError {
  readonly family = 'tool' as const
  readonly code: string
  readonly status: number

  constructor (status: number, code: string, message: string, extensions?: Record<string, unknown>, options?: ToolgateErrorOptions) {
    super(message, extensions, options)
    if (!Number.isInteger(status) || status < 400 || status > 599) {
      throw new TypeError(`ToolError status must be an integer 400-599, got ${String(status)}`)
    }
    if (!isToolCode(code)) {
      throw new TypeError(`ToolError code must match ${TOOL_CODE} and not start with ${ERROR_PREFIX}, got ${String(code)}`)
    }
    this.name = 'ToolError'
    this.status = status
    this.code = code
  }

  get title (): string { return 'Tool error' }
}

/** Raised at start-up by `defineTool` and the catalog: names the tool and the field. */
export class ToolDefinitionError extends Error {
  constructor (readonly toolId: string, readonly field: string, problem: string, readonly source?: string) {
    super(`tool "${toolId}"${source === undefined ? '' : ` (${source})`}: field "${field}" ${problem}`)
    this.name = 'ToolDefinitionError'
  }
}
