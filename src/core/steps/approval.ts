import { guarded, notFound } from '../approvals/approvals.js'
import type { ApprovalReason, ApprovalRecord } from '../approvals/store.js'
import { viewOf, type ApprovalView } from '../approvals/view.js'
import { GatewayError } from '../errors.js'
import { createHash } from 'node:crypto'
import { canonicalJson, fingerprintOf } from '../idempotency/fingerprint.js'
import type { AnyTool, ToolContext } from '../tool.js'
import type { CallRecord } from '../call-record.js'
import type { Binding, Call, InvokeRequest, InvokeResult, PipelineEnv } from '../types.js'

/*
 * Step 6b, right after `authorize`: does a person have to say yes before this call runs?
 * The tool's `requiresApproval`, an operator rule and every escalation can ask for it. Such a
 * call without an approval id opens a pending approval and executes nothing; with one, it runs
 * at most once under the idempotency key `approval:{id}`, so a repeat replays its answer.
 * Transport-neutral: a pending approval is a typed result, every refusal a GatewayError.
 */

export type ApprovalGate =
  | { readonly type: 'pending', readonly view: ApprovalView }
  | { readonly type: 'approved', readonly record: ApprovalRecord, readonly key: string, readonly waited: boolean }

/** Undefined (synchronously) when the call needs no approval and carries none: the common path costs no promise. */
export function checkApproval<App> (
  env: PipelineEnv, binding: Binding<App>, tool: AnyTool<App>, input: unknown, ctx: ToolContext<App>, request: InvokeRequest,
): ApprovalGate | undefined | Promise<ApprovalGate> {
  if (request.dryRun === true) return undefined
  if (request.approvalId !== undefined) return useApproval(env, binding, tool, input, ctx, request, request.approvalId)
  const rule = binding.approvalRule?.(tool)
  const reasons = reasonsFor(binding, tool, input, ctx, request, rule !== undefined)
  if (reasons.length === 0) return undefined
  // Asking where nobody can answer would leave the caller waiting for ever: say so at once.
  const { undecidable } = env.approvals
  if (undecidable !== undefined) throw new GatewayError('TOOLGATE_APPROVAL_UNDECIDABLE', `"${tool.id}" needs a person's approval here, and ${undecidable}`)
  return ask(env, binding, tool, input, ctx, request, reasons, rule?.approvers ?? [])
}

function reasonsFor<App> (binding: Binding<App>, tool: AnyTool<App>, input: unknown, ctx: ToolContext<App>, request: InvokeRequest, ruled: boolean): ApprovalReason[] {
  const reasons: ApprovalReason[] = []
  if (needsApproval(tool, input, ctx)) reasons.push('tool')
  if (ruled) reasons.push('rule')
  if (request.escalate === true && !binding.escalationApproved) reasons.push('escalation')
  return reasons
}

/** Nothing ran: the answer is the pending approval itself (HTTP: 202), marked as such for every adapter. */
export function pendingResult<App> (binding: Binding<App>, record: CallRecord, view: ApprovalView): InvokeResult {
  record.outcome = 'approval_pending'
  record.status = 202
  return { value: view, record, replayed: false, body: binding.serialize?.(view), approval: view }
}

/** Fails closed: a predicate that throws, or answers anything but `false`, asks for approval. */
function needsApproval<App> (tool: AnyTool<App>, input: unknown, ctx: ToolContext<App>): boolean {
  const requires = tool.requiresApproval
  if (typeof requires !== 'function') return requires === true
  try {
    return requires(input, ctx) !== false
  } catch {
    return true
  }
}

/**
 * Limits past their count asked a person (`LimitAsk`, at the charge): open the approval, or for a
 * re-sent keyed call find the one it opened before. Approved, the call runs past those limits
 * and is charged then.
 */
export async function askForLimits<App> (
  env: PipelineEnv, binding: Binding<App>, tool: AnyTool<App>, input: unknown, ctx: ToolContext<App>, request: InvokeRequest, limits: readonly string[],
): Promise<ApprovalGate> {
  const { undecidable } = env.approvals
  if (undecidable !== undefined) throw new GatewayError('TOOLGATE_APPROVAL_UNDECIDABLE', `"${tool.id}" is past its limit ${limits.map(name => `"${name}"`).join(', ')}, where a person decides, and ${undecidable}`)
  return await ask(env, binding, tool, input, ctx, request, ['limit'], binding.approvalRule?.(tool)?.approvers ?? [], limits)
}

async function ask<App> (
  env: PipelineEnv, binding: Binding<App>, tool: AnyTool<App>, input: unknown, ctx: ToolContext<App>, request: InvokeRequest,
  reasons: ApprovalReason[], approvers: readonly string[], limits?: readonly string[],
): Promise<ApprovalGate> {
  const { approvals } = env
  const requestedBy = requesterOf(binding)
  const inputDigest = fingerprintOf(input)
  const { record, created } = await approvals.request({
    tool: tool.id, kind: tool.kind, effects: tool.effects, effectsLabel: tool.effectsLabel, inputDigest,
    // A detached JSON copy: what the approver reads is what was digested, whatever the tool does later.
    input: JSON.parse(canonicalJson(input ?? null)) as unknown,
    escalate: request.escalate === true, reasons, requestedBy, approvers, ...(limits === undefined ? {} : { limits }),
  }, request.idempotencyKey === undefined ? undefined : keyedId(requestedBy, tool.id, request.idempotencyKey))
  if (!created) {
    // A re-sent call (same idempotency key): the approval it asked for before decides.
    if (record.inputDigest !== inputDigest || record.escalate !== (request.escalate === true)) {
      throw new GatewayError('TOOLGATE_IDEMPOTENCY_MISMATCH', 'this idempotency key was used with a different input')
    }
    if (record.status !== 'pending') return gateOf(record, approvals.now(), false)
  }
  const waitMs = Math.min(request.waitForApprovalMs ?? 0, approvals.maxWaitMs)
  if (!(waitMs > 0)) return { type: 'pending', view: viewOf(record) }
  const settled = await approvals.awaitDecision(record.id, waitMs, ctx.signal)
  if (settled === undefined || settled.status === 'pending') return { type: 'pending', view: viewOf(settled ?? record) }
  return gateOf(settled, approvals.now(), true)
}

async function useApproval<App> (
  env: PipelineEnv, binding: Binding<App>, tool: AnyTool<App>, input: unknown, ctx: ToolContext<App>, request: InvokeRequest, id: string,
): Promise<ApprovalGate> {
  const { approvals } = env
  const record = await approvals.get(id)
  if (record === undefined) throw notFound(id)
  if (record.requestedBy !== requesterOf(binding)) {
    throw new GatewayError('TOOLGATE_APPROVAL_NOT_YOURS', 'this approval was asked for by another principal; an approval runs only its own requester\'s call')
  }
  if (record.tool !== tool.id || record.escalate !== (request.escalate === true) || record.inputDigest !== fingerprintOf(input)) {
    throw new GatewayError('TOOLGATE_APPROVAL_MISMATCH', `approval "${id}" was given for another call (tool, input or escalation differ); re-send exactly the approved call`)
  }
  // Still undecided and the caller would rather wait (`Prefer: wait`, an MCP retry): wait here.
  const waitMs = Math.min(request.waitForApprovalMs ?? 0, approvals.maxWaitMs)
  if (record.status !== 'pending' || !(waitMs > 0)) return gateOf(record, approvals.now(), false)
  const settled = await approvals.awaitDecision(id, waitMs, ctx.signal)
  if (settled === undefined) throw notFound(id)
  return gateOf(settled, approvals.now(), true)
}

/** Where a settled record leaves the call: run (approved, or used: then its answer replays), or a refusal. */
function gateOf (record: ApprovalRecord, now: number, waited: boolean): ApprovalGate {
  switch (record.status) {
    case 'pending':
      throw new GatewayError('TOOLGATE_APPROVAL_PENDING', `approval "${record.id}" is not decided yet`, { retryAfter: 5, approvalId: record.id })
    case 'rejected':
      throw new GatewayError('TOOLGATE_APPROVAL_REJECTED', `approval "${record.id}" was rejected by ${record.decidedBy ?? 'an approver'}${record.note === undefined ? '' : `: ${record.note}`}`, { approvalId: record.id, decidedBy: record.decidedBy, note: record.note ?? null })
    case 'expired':
      throw expired(record)
    case 'approved':
      if (record.expiresAt <= now) throw expired(record)
      return { type: 'approved', record, key: `approval:${record.id}`, waited }
    case 'consumed':
      return { type: 'approved', record, key: `approval:${record.id}`, waited }
  }
}

function expired (record: ApprovalRecord): GatewayError {
  const what = record.status === 'approved' ? 'was approved but not used in time' : 'expired before anyone decided it'
  return new GatewayError('TOOLGATE_APPROVAL_EXPIRED', `approval "${record.id}" ${what}; send the call again without Approval-Id to ask anew`, { approvalId: record.id })
}

/**
 * The run of an approved call, inside its idempotency claim: consume the approval (once, even
 * across replicas), run, report. A call refused before `execute` began (queue full, shutdown)
 * gives the approval back, so that the approved call can still be made.
 */
export function runApproved (call: Call, gate: ApprovalGate & { type: 'approved' }, run: () => Promise<unknown>): () => Promise<unknown> {
  const { approvals } = call.env
  const { record } = gate
  return async () => {
    const consumed = await guarded(() => approvals.store.consume(record.id, approvals.now()))
    if (consumed === 'expired') throw expired(record)
    if (consumed === 'not_found') throw notFound(record.id)
    if (consumed === 'not_approved') {
      throw new GatewayError('TOOLGATE_APPROVAL_USED', `approval "${record.id}" already ran its call and its stored answer is gone; ask for a new approval`)
    }
    try {
      const value = await run()
      approvals.emit({ type: 'executed', record, by: requesterOf(call.binding), ok: true })
      return value
    } catch (error) {
      if (call.record.executed) approvals.emit({ type: 'executed', record, by: requesterOf(call.binding), ok: false })
      else await approvals.store.unconsume(record.id).catch(() => {})
      throw error
    }
  }
}

/**
 * A call sent with an idempotency key asks for one approval however often it is re-sent: the
 * approval id is derived from (principal, tool, key), like the idempotency record's own key.
 */
function keyedId (requester: string, toolId: string, key: string): string {
  return createHash('sha256').update(`${requester.length}:${requester}|${toolId}|${key}`).digest('hex').slice(0, 32)
}

function requesterOf<App> (binding: Binding<App>): string {
  return binding.requester ?? binding.idempotencyScope
}
