import { SPEC_FORMATS, type SpecFormat } from '../../src/services/llm-specs/names.js'
import { z } from 'zod'
import { GATEWAY_CALL_STATUSES } from '../../src/core/tool-errors.js'
import { CALL_OPTIONS } from '../../src/core/call-options.js'
import { MAX_QUERY_LENGTH, SEARCH_LIMIT } from '../../src/services/search/query.js'

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


const flag = CALL_OPTIONS.dryRun.text

export const CallQuery = z.object({
  mode: CALL_OPTIONS.mode.text.optional().describe('plan: only read-only tools run; others are refused with 403'),
  dryRun: flag.optional().describe(`true: validate and authorize, return what the call would do (as ${'`'}application/vnd.toolgate.dry-run+json${'`'}), execute nothing`),
  escalate: CALL_OPTIONS.escalate.text.optional().describe('true: ask to escalate; needs a tool with supportsEscalation and a person\'s approval (202, then Approval-Id)'),
})

/** `GET /tools?format=...&q=...`: the caller's tools, or those a search finds, in one provider's request format. */
export const SpecQuery = z.object({
  q: z.string().optional().describe(`Search: the tools these words best describe, best first (1 to ${MAX_QUERY_LENGTH} characters, at most 32 words); absent: every tool, in catalog order`),
  limit: z.coerce.number().int().min(1).max(SEARCH_LIMIT.max).default(SEARCH_LIMIT.default).describe('With `q`: how many tools at most'),
  format: z.enum(SPEC_FORMATS as [SpecFormat, ...SpecFormat[]]).optional()
    .describe('openai, openai-responses, anthropic, gemini or mcp: the `tools` field of that provider\'s request body'),
  strict: flag.optional().describe('true: OpenAI strict-mode schemas (every property required, optionals nullable, no additional properties, no $ref)'),
})

/** The `tools` field of a provider's request body, as `GET /tools?format=...` answers it. */
export const ProviderSpecs = z.object({
  tools: z.array(z.record(z.string(), z.unknown())).describe('Ready to paste as the `tools` of an OpenAI, Anthropic or Gemini request, or an MCP tools/list result'),
}).meta({ id: 'ProviderToolSpecs' })
