import { z } from 'zod'
import type { AnyTool } from '../../src/index.js'
import { effectsText, summaryOf } from '../../src/services/tool-listing.js'
import { compileGlob } from '../../src/services/auth/index.js'
import type { Config } from '../../src/services/config.js'
import { ApprovalSchema } from '../approvals/schemas.js'
import { callStatusesOf, CallHeaders, CallHeadersWithKey, CallQuery, DRY_RUN_TYPE } from '../tools/call-schemas.js'
import { toolErrorsExtension, toolProblemResponses } from './tool-problems.js'
import { LIMIT_HEADERS, limitedResponse, limitExtension } from './tool-limits.js'
import type { Limit } from '../../src/core/limits/limit.js'

/**
 * Can a call of this tool be asked to wait for approval, whoever calls it: its declaration
 * asks (`requiresApproval`, even as a predicate that may say no), it supports escalation (an
 * escalation always needs one), or an operator's approval rule names it.
 */
export function approvableBy (rules: readonly ApprovalRuleEntry[]): (tool: AnyTool) => boolean {
  const globs = rules.flatMap(rule => rule.tools.map(compileGlob))
  return tool => (tool.requiresApproval !== undefined && tool.requiresApproval !== false) || tool.supportsEscalation === true || globs.some(glob => glob.test(tool.id))
}

export const SECURITY: Array<Record<string, string[]>> = [{ apiKey: [] }, { bearer: [] }]

type ApprovalRuleEntry = Config['approvalRules'][number]

const ANY_PROPOSAL = z.unknown().describe('What the call would do, as the tool\'s resolve describes it')

/**
 * The 200 of a tool call: its output, or for a dry run what the call would do, under its own
 * media type so that a client (and a validator) never reads a proposal as the tool's output.
 * Without `resolve` a dry run answers the parsed input.
 */
function okResponseOf (tool: AnyTool): { description: string, content: Record<string, { schema: AnyTool['inputSchema'] }> } {
  return {
    description: `The tool's output (application/json). With \`dryRun=true\`: what the call would do, nothing executed (${DRY_RUN_TYPE}).`,
    content: {
      'application/json': { schema: tool.outputSchema },
      [DRY_RUN_TYPE]: { schema: tool.resolve === undefined ? tool.inputSchema : ANY_PROPOSAL },
    },
  }
}

/** The 202 of a call that waits for a person: the pending approval, and where it lives. */
const PENDING_RESPONSE = {
  description: 'Nothing ran: the call waits for a person\'s approval. Re-send it with `Approval-Id` once approved.',
  headers: { Location: { type: 'string', description: 'The pending approval: `/approvals/{id}`' } },
  content: { 'application/json': { schema: ApprovalSchema } },
}

/**
 * The route schema of one tool's `POST /tools/{id}` operation, derived from its declaration and
 * whether a call of it can wait for approval here (`approvable`: its `requiresApproval`, an
 * approval rule matching it, `supportsEscalation`): only then does it document 202, so a
 * client generated from the document reads a read-only tool's 200 as its output alone. Its
 * problem statuses are the gateway's for this call and the tool's declared `errors`.
 */
export function operationOf (tool: AnyTool, defaultTimeoutMs: number, approvable: boolean, limits: readonly Limit[] = []): Record<string, unknown> {
  const timeoutMs = tool.timeoutMs ?? defaultTimeoutMs
  // A limit where a person decides makes any call of the tool one that may wait for approval.
  approvable ||= limits.some(limit => limit.over === 'approve')
  const ok = okResponseOf(tool)
  const flags = [tool.isReadOnly ? 'read-only' : 'changes state', tool.isConcurrencySafe ? 'concurrency-safe' : 'runs exclusively in its session']
  return {
    operationId: tool.id,
    summary: summaryOf(tool),
    description: `${tool.description}\n\n**${effectsText(tool)}** ${flags.join(', ')}; timeout ${timeoutMs === Infinity ? 'none (interactive)' : `${timeoutMs} ms`}.`,
    tags: [tool.kind],
    security: SECURITY,
    body: tool.inputSchema,
    response: {
      200: limits.length === 0 ? ok : { ...ok, headers: LIMIT_HEADERS },
      ...(approvable ? { 202: PENDING_RESPONSE } : {}),
      ...toolProblemResponses(tool, callStatusesOf(approvable, timeoutMs)),
      ...(limits.length === 0 ? {} : { 429: limitedResponse(limits) }),
    },
    ...(limits.length === 0 ? {} : { 'x-limits': limits.map(limitExtension) }),
    'x-effects': [...tool.effects],
    'x-tool-errors': toolErrorsExtension(tool),
    'x-read-only': tool.isReadOnly,
    'x-concurrency-safe': tool.isConcurrencySafe,
    'x-timeout-ms': timeoutMs === Infinity ? null : timeoutMs,
    querystring: CallQuery,
    headers: tool.requiresIdempotencyKey === true ? CallHeadersWithKey : CallHeaders,
  }
}
