import { z } from 'zod'
import type { GatewayApp } from 'toolgate'
import { defineTool, type AnyTool } from 'toolgate'
import { hasScope, denyWithoutScope, type GatewayContext } from './lib/context.js'
import { ApprovalDesk } from './approval/desk.js'

/*
 * Ask a person, wait for the answer. `approval_request` blocks until someone holding the scope
 * `approvals:grant` decides its ticket with `approval_grant` (found with `approval_list`), or
 * until its call is cancelled. The decider must be another principal: approving your own
 * request would defeat the point. The decider calls from their own session, which is also why
 * the pair cannot deadlock: an `approval_grant` in the asker's own concurrency domain would
 * wait for the asker's pending call to end.
 */

export const GRANT_SCOPE = 'approvals:grant'

const ticket = z.uuid().describe('The ticket id, as shown by approval_list.')
const pendingOutput = z.object({
  ticket: z.string(),
  question: z.string().describe('What the asker wants approved.'),
  requestedBy: z.string().describe('The principal waiting for the answer.'),
  requestedAt: z.iso.datetime(),
})

const isGranter = (app: GatewayApp): boolean => hasScope(app, GRANT_SCOPE)

/** The approval tools over one desk; the default export uses a fresh desk. */
export function createApprovalTools (desk = new ApprovalDesk()): AnyTool[] {
  return [
    defineTool({
      id: 'approval_request',
      kind: 'approval',
      description: 'Ask a person to approve something and wait, as long as it takes, for their answer. Call it before an action that needs a human\'s consent; the answer says approved or not, who decided and their note. Fails with TOO_MANY_PENDING_APPROVALS (429) when too many requests wait.',
      shortDescription: 'Ask a person for approval and wait for the answer (question).',
      inputSchema: z.object({
        question: z.string().trim().min(1).max(2_000).describe('What to approve, in words a person can decide on.'),
      }).strict(),
      outputSchema: z.object({
        ticket: z.string().describe('The ticket the decision was made on.'),
        approved: z.boolean().describe('The person\'s answer.'),
        decidedBy: z.string().describe('The principal who decided.'),
        note: z.string().nullable().describe('The decider\'s note, if any.'),
        waitedMs: z.number().int().min(0).describe('How long the call waited.'),
      }),
      // Waiting changes nothing (the ticket lives and dies with this call), so the asker's
      // session may go on reading while it waits; anything that writes queues behind it.
      isReadOnly: true,
      isConcurrencySafe: true,
      interactive: true,
      timeoutMs: Infinity,
      authorize () {},
      async execute ({ question }, ctx: GatewayContext) {
        const started = Date.now()
        const requestedBy = ctx.app.principal.id
        const decision = await desk.wait(question, requestedBy, ctx.signal, pending => {
          ctx.app.log.info({ ticket: pending.ticket, requestedBy }, 'approval requested')
        })
        return { ...decision, waitedMs: Date.now() - started }
      },
    }),
    defineTool({
      id: 'approval_list',
      kind: 'approval',
      description: 'List the approval requests waiting for a decision, with their questions and who asked. Offered only to principals allowed to decide them.',
      shortDescription: 'Pending approval requests (no arguments).',
      inputSchema: z.object({}).strict(),
      outputSchema: z.object({ pending: z.array(pendingOutput) }),
      isReadOnly: true,
      isConcurrencySafe: true,
      active: isGranter,
      authorize (_input, ctx: GatewayContext) { denyWithoutScope(ctx.app, GRANT_SCOPE, 'listing approvals') },
      execute: () => ({ pending: desk.list() }),
    }),
    defineTool({
      id: 'approval_grant',
      kind: 'approval',
      description: 'Approve or deny a waiting approval request by its ticket; the asker\'s call returns your answer at once. You cannot decide your own request. Fails with TICKET_NOT_FOUND (404) when the ticket is not waiting.',
      shortDescription: 'Decide a pending approval (ticket, decision, note?).',
      inputSchema: z.object({
        ticket,
        decision: z.enum(['approve', 'deny']).describe('Your answer.'),
        note: z.string().max(500).optional().describe('A note passed back to the asker.'),
      }).strict(),
      outputSchema: pendingOutput.extend({ approved: z.boolean().describe('The answer given.') }),
      // It releases another principal's waiting call with the answer.
      effects: ['affects-others'],
      isReadOnly: false,
      isConcurrencySafe: false,
      timeoutMs: 5_000,
      active: isGranter,
      authorize (input, ctx: GatewayContext) {
        denyWithoutScope(ctx.app, GRANT_SCOPE, 'deciding approvals')
        if (desk.get(input.ticket)?.requestedBy === ctx.app.principal.id) throw new Error('you cannot decide your own approval request')
      },
      execute (input, ctx: GatewayContext) {
        const approved = input.decision === 'approve'
        const pending = desk.decide(input.ticket, { approved, decidedBy: ctx.app.principal.id, note: input.note ?? null })
        return { ...pending, approved }
      },
    }),
  ]
}

export default createApprovalTools()
