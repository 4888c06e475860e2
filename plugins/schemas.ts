import { SPEC_FORMATS, type SpecFormat } from '../src/services/llm-specs/names.js'
import { z } from 'zod'
import { GATEWAY_CALL_STATUSES } from '../src/core/tool-errors.js'
import { CALL_OPTIONS } from '../src/core/call-options.js'

/** RFC 9457 problem details, as every error of the gateway is sent. */
export const ProblemSchema = z.looseObject({
  type: z.string().describe('A URN naming the error: urn:toolgate:error:<code>'),
  title: z.string(),
  status: z.number().int().describe('Equal to the HTTP status'),
  detail: z.string(),
  code: z.string().describe('Stable machine code: TOOLGATE_* for the gateway, the tool\'s own code for a ToolError'),
  instance: z.string().optional(),
  errors: z.array(z.object({ pointer: z.string(), message: z.string(), code: z.string() })).optional()
    .describe('For 400: every input issue, with a JSON pointer into the request body'),
  outcome: z.literal('unknown').optional()
    .describe('The call may or may not have taken effect: check state before retrying'),
}).meta({ id: 'Problem', description: 'An RFC 9457 problem (application/problem+json)' })

const STATUS_TEXT: Record<number, string> = {
  400: 'Bad request: invalid input or options', 401: 'Authentication required', 403: 'Forbidden',
  404: 'Not found or not active for this caller', 405: 'This path does not take that method (see Allow)', 408: 'The request took too long to arrive', 409: 'Conflict', 410: 'Gone: the approval expired', 413: 'Body too large', 415: 'Unsupported media type',
  422: 'Rejected', 431: 'Request headers too large', 429: 'Too many requests (see Retry-After)', 499: 'Cancelled by the caller',
  500: 'Internal error or tool failure', 502: 'The tool returned invalid output', 503: 'Unavailable (see Retry-After)',
  504: 'The tool timed out',
}

/** The generic text of a problem status, as every operation describes it. */
export function statusText (status: number): string {
  return STATUS_TEXT[status] ?? 'Error'
}

/** Response objects made here, shared by every route that uses them (the OpenAPI transform converts each once). */
export const SHARED_PROBLEMS = new WeakSet<object>()
const madeProblems = new Map<number, ProblemResponse>()

interface ProblemResponse { description: string, content: Record<string, { schema: typeof ProblemSchema }> }

/** Every status the gateway's catalogue can produce, as problem+json responses for the OpenAPI document. */
export function problemResponses (statuses: readonly number[]): Record<number, { description: string, content: Record<string, { schema: typeof ProblemSchema }> }> {
  const responses: Record<number, ProblemResponse> = {}
  for (const status of statuses) {
    let response = madeProblems.get(status)
    if (response === undefined) {
      response = { description: statusText(status), content: { 'application/problem+json': { schema: ProblemSchema } } }
      madeProblems.set(status, response)
      SHARED_PROBLEMS.add(response)
    }
    responses[status] = response
  }
  return responses
}

/**
 * The error statuses one tool's call can answer: the catalogue's, less those only some tools
 * reach. 410 is an approval that expired, so only a tool that can ask for approval answers it
 * (an `Approval-Id` of another tool's approval is 422); 504 is a timeout, which a tool without
 * one (interactive, `timeoutMs: Infinity`) never reaches.
 */
export function callStatusesOf (approvable: boolean, timeoutMs: number): number[] {
  return GATEWAY_CALL_STATUSES.filter(status => (status !== 410 || approvable) && (status !== 504 || timeoutMs !== Infinity))
}

/** The media type of a dry run's 200: a proposal, never the tool's output. */
export const DRY_RUN_TYPE = 'application/vnd.toolgate.dry-run+json'

export const SESSION_ID = /^[\w.:@-]{1,128}$/

const IDEMPOTENCY_KEY_TEXT = 'Run at most once per key: a repeat with the same input replays the stored answer (with Idempotent-Replayed: true); another input is 422; while the first call runs, 409. Kept 24 h.'
// The call options' documented forms are their one definition's text forms (src/core/call-options.ts).
const idempotencyKey = CALL_OPTIONS.idempotencyKey.text

export const CallHeaders = z.object({
  'x-session-id': z.string().regex(SESSION_ID).optional()
    .describe('Concurrency domain: calls of one session are scheduled together (default: your principal)'),
  'idempotency-key': idempotencyKey.optional().describe(IDEMPOTENCY_KEY_TEXT),
  'approval-id': CALL_OPTIONS.approvalId.text.optional()
    .describe('Run the call this approval was given for: once (a repeat replays its answer); another principal 403, another input 422, rejected 403, expired 410, undecided 409'),
  prefer: z.string().optional()
    .describe('RFC 7240 `wait=N`: when the call needs approval (or carries the `Approval-Id` of an undecided one), wait up to N seconds for the decision and answer the final result (`Preference-Applied`)'),
})

/** The headers of a tool declared with `requiresIdempotencyKey`: the key is required (a dry run may omit it). */
export const CallHeadersWithKey = CallHeaders.extend({
  'idempotency-key': idempotencyKey.describe(`Required by this tool (a dry run may omit it). ${IDEMPOTENCY_KEY_TEXT}`),
})

/**
 * Add problem responses for `statuses` to a documented route that lacks them: for failures
 * that a whole scope can answer (a hook, not the handler), so every operation in it says so.
 */
export function documentStatuses (route: { schema?: Record<string, unknown> }, statuses: readonly number[]): void {
  const schema = route.schema
  if (schema === undefined || schema.hide === true) return
  const response = (schema.response ?? {}) as Record<string, unknown>
  const missing = statuses.filter(status => response[status] === undefined && response[String(status)] === undefined)
  if (missing.length > 0) schema.response = { ...response, ...problemResponses(missing) }
}

const flag = CALL_OPTIONS.dryRun.text

export const CallQuery = z.object({
  mode: CALL_OPTIONS.mode.text.optional().describe('plan: only read-only tools run; others are refused with 403'),
  dryRun: flag.optional().describe(`true: validate and authorize, return what the call would do (as ${'`'}application/vnd.toolgate.dry-run+json${'`'}), execute nothing`),
  escalate: CALL_OPTIONS.escalate.text.optional().describe('true: ask to escalate; needs a tool with supportsEscalation and a person\'s approval (202, then Approval-Id)'),
})

/** `GET /tools?format=...`: the caller's tools in one provider's request format. */
export const SpecQuery = z.object({
  format: z.enum(SPEC_FORMATS as [SpecFormat, ...SpecFormat[]]).optional()
    .describe('openai, openai-responses, anthropic, gemini or mcp: the `tools` field of that provider\'s request body'),
  strict: flag.optional().describe('true: OpenAI strict-mode schemas (every property required, optionals nullable, no additional properties, no $ref)'),
})

/** The `tools` field of a provider's request body, as `GET /tools?format=...` answers it. */
export const ProviderSpecs = z.object({
  tools: z.array(z.record(z.string(), z.unknown())).describe('Ready to paste as the `tools` of an OpenAI, Anthropic or Gemini request, or an MCP tools/list result'),
}).meta({ id: 'ProviderToolSpecs' })
