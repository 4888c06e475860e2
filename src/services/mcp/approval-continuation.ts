import { guarded, notFound, type Approvals } from '../../core/approvals/approvals.js'
import { viewOf, type ApprovalView } from '../../core/approvals/view.js'
import { newId } from '../../core/ids.js'
import { JSON_RPC, JsonRpcError } from './json-rpc.js'
import type { ApprovalState, RequestStateSeal, StatePayload } from './request-state.js'

/**
 * MCP 2026-07-28 asks a client for more before a call can complete with an `input_required`
 * result whose `requestState` the client echoes on its retry. A call waiting for a person's
 * approval is such a call: its state names the approval, and it is
 * - integrity-protected: sealed (AES-256-GCM), so it can be neither forged nor altered;
 * - caller-bound: it names the principal and the tool, and opens for no one else;
 * - single-use: its nonce must be the approval's live continuation, which redeeming replaces.
 * The retry then runs the pipeline with the approval's id, as REST's `Approval-Id` does, so the
 * pipeline still checks principal, tool and input digest and runs the approved call once.
 */
export class ApprovalContinuations {
  readonly #approvals: Approvals
  readonly #seal: () => Promise<RequestStateSeal>
  /** How long a redeemed state's call waits for the decision (the pipeline's approval wait). */
  readonly waitMs: number

  constructor (approvals: Approvals, seal: () => Promise<RequestStateSeal>, waitMs: number) {
    this.#approvals = approvals
    this.#seal = seal
    this.waitMs = waitMs
  }

  /** The state of a call that has just been answered with this pending approval. */
  async issue (approval: ApprovalView, principal: string, tool: string): Promise<string> {
    const nonce = newId()
    // Undefined expected: a re-sent call (same idempotency key) retires the state sent before.
    if (await this.#approvals.replaceContinuation(approval.id, undefined, nonce) === 'not_found') throw notFound(approval.id)
    return (await guarded(this.#seal)).seal({ v: 1, approval: approval.id, nonce, principal, tool, expiresAt: this.#expiryOf(approval) })
  }

  /** The state of a call that ran nothing until its caller links an account: its retry runs anew. */
  async retry (principal: string, tool: string, ttlMs: number): Promise<string> {
    return (await guarded(this.#seal)).seal({ v: 1, retry: 'link', principal, tool, expiresAt: this.#approvals.now() + ttlMs })
  }

  /**
   * Open a retry's state and check it is this caller's, for this tool, and live: the call it
   * continues (an approval's, or a question's). One that is not ours, another caller's, another
   * tool's or expired: -32602.
   */
  async open (state: string, principal: string, tool: string): Promise<StatePayload> {
    const payload = (await guarded(this.#seal)).open(state)
    if (payload === undefined) throw refused('it was not issued by this gateway, or it was altered')
    if (payload.principal !== principal) throw refused('it was issued to another caller')
    if (payload.tool !== tool) throw refused(`it was issued for the tool "${payload.tool}"`)
    if (payload.expiresAt <= this.#approvals.now()) throw refused('it expired; call the tool again without it to ask anew')
    return payload
  }

  /**
   * Redeem an approval's state (opened): the approval id its call runs under, and the state to
   * answer if the approval is still pending after the wait (already live, so the next retry
   * can use it). A state used already: -32602.
   */
  async redeem (payload: ApprovalState): Promise<{ readonly approvalId: string, readonly next: () => Promise<string> }> {
    const seal = await guarded(this.#seal)
    const nonce = newId()
    const replaced = await this.#approvals.replaceContinuation(payload.approval, payload.nonce, nonce)
    if (replaced === 'stale') {
      // Its own caller may still run (or replay) the approved call by id, e.g. after losing an answer.
      throw refused(`it was used already (each state works once); the approval is ${payload.approval}: send the call with _meta["dev.toolgate/approvalId"] to run or replay it`, { approvalId: payload.approval })
    }
    // 'not_found': the approval is gone; the pipeline answers that with its own problem.
    const next: ApprovalState = { ...payload, nonce }
    return { approvalId: payload.approval, next: async () => seal.seal(next) }
  }

  /** The approval as its requester sees it now (undefined once forgotten). */
  async view (id: string): Promise<ApprovalView | undefined> {
    const record = await this.#approvals.get(id).catch(() => undefined) // only for `_meta`: never fails the answer
    return record === undefined ? undefined : viewOf(record)
  }

  /** A state outlives its pending approval by the time an approved call may be used. */
  #expiryOf (approval: ApprovalView): number {
    return Date.parse(approval.expiresAt) + this.#approvals.ttlMs
  }
}

export function refused (why: string, data?: Record<string, unknown>): JsonRpcError {
  return new JsonRpcError(JSON_RPC.invalidParams, `requestState refused: ${why}`, data)
}
