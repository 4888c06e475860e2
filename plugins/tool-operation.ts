import { z } from 'zod'
import type { AnyTool } from '../src/index.js'
import { effectsText, summaryOf } from '../src/services/tool-listing.js'
import { ApprovalSchema } from './approval-schemas.js'
import { CALL_STATUSES, CallHeaders, CallHeadersWithKey, CallQuery, DRY_RUN_TYPE, problemResponses } from './schemas.js'

export const SECURITY: Array<Record<string, string[]>> = [{ apiKey: [] }, { bearer: [] }]

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

/** The route schema of one tool's `POST /tools/{id}` operation, derived from its declaration alone. */
export function operationOf (tool: AnyTool, defaultTimeoutMs: number): Record<string, unknown> {
  const timeoutMs = tool.timeoutMs ?? defaultTimeoutMs
  const flags = [tool.isReadOnly ? 'read-only' : 'changes state', tool.isConcurrencySafe ? 'concurrency-safe' : 'runs exclusively in its session']
  return {
    operationId: tool.id,
    summary: summaryOf(tool),
    description: `${tool.description}\n\n**${effectsText(tool)}** ${flags.join(', ')}; timeout ${timeoutMs === Infinity ? 'none (interactive)' : `${timeoutMs} ms`}.`,
    tags: [tool.kind],
    security: SECURITY,
    body: tool.inputSchema,
    response: { 200: okResponseOf(tool), 202: ApprovalSchema.describe('Nothing ran: the call waits for a person\'s approval (`Location`: the approval). Re-send it with `Approval-Id` once approved.'), ...problemResponses(CALL_STATUSES) },
    'x-effects': [...tool.effects],
    'x-read-only': tool.isReadOnly,
    'x-concurrency-safe': tool.isConcurrencySafe,
    'x-timeout-ms': timeoutMs === Infinity ? null : timeoutMs,
    querystring: CallQuery,
    headers: tool.requiresIdempotencyKey === true ? CallHeadersWithKey : CallHeaders,
  }
}
