import { shareRefusal } from '../idempotency/shares.js'
import type { Effect } from '../tool.js'

/**
 * Approval records: a person's yes or no on one call (principal, tool, input digest) before it
 * runs. The store is shared state between the requester's call, the approver's decision and
 * the requester's retry, so `create`, `decide` and `consume` are each atomic: of two racing
 * decisions one wins; of two racing consumptions one gets `consumed`.
 */

export type ApprovalStatus = 'pending' | 'approved' | 'rejected' | 'expired' | 'consumed'

/** Why the call needs an approval: the tool's declaration, an operator rule, an escalation, or a limit past its count. */
export type ApprovalReason = 'tool' | 'rule' | 'escalation' | 'limit'

/** What is fixed when the approval is requested. */
export interface ApprovalRequest {
  readonly id: string
  readonly tool: string
  readonly kind: string
  readonly effects: readonly Effect[]
  readonly effectsLabel: string
  /** SHA-256 of the parsed input in canonical JSON (the idempotency fingerprint). */
  readonly inputDigest: string
  /** The parsed input, for the approver to read. */
  readonly input: unknown
  readonly escalate: boolean
  readonly reasons: readonly ApprovalReason[]
  /** The limits past their count that asked (reason `limit`). */
  readonly limits?: readonly string[]
  readonly requestedBy: string
  /** Principals allowed to decide (empty: anyone with the approver scope). */
  readonly approvers: readonly string[]
  readonly requestedAt: number
}

/** The request and where it stands now. */
export interface ApprovalRecord extends ApprovalRequest {
  readonly status: ApprovalStatus
  /** Pending: when it expires undecided. Approved: until when it may be used. */
  readonly expiresAt: number
  readonly decidedBy?: string
  readonly decidedAt?: number
  readonly note?: string
  readonly consumedAt?: number
  /**
   * The nonce of this approval's one live continuation (MCP's `requestState`): a continuation
   * is redeemed by replacing it, so each one works once and a newer one retires the older.
   */
  readonly continuation?: string
}

export interface ApprovalLimits {
  readonly maxPendingPerPrincipal: number
  readonly maxPendingTotal: number
}

/**
 * Whether a principal holding `mine` pending approvals, of `total` pending in all, may open one
 * more: the rule idempotency records share (`idempotency/shares.ts`). A principal may hold its
 * share (`maxPendingPerPrincipal`); the last eighth of `maxPendingTotal` is kept for principals
 * with none pending, so however few principals fill the rest, one with nothing waiting can
 * still ask. Every store applies this rule (Redis in its script, with {@link reserveOf}).
 */
export function pendingRefusal (total: number, mine: number, limits: ApprovalLimits): 'principal_full' | 'full' | undefined {
  const refusal = shareRefusal({ used: total, ownerUsed: mine, cost: 1, max: limits.maxPendingTotal, perOwner: limits.maxPendingPerPrincipal, firstRecords: mine === 0 })
  return refusal === 'owner' ? 'principal_full' : refusal === 'store' ? 'full' : undefined
}

/** `exists`: a record with this id is already kept (ids derived from an idempotency key repeat). */
export type CreateResult = 'created' | 'exists' | 'principal_full' | 'full'

export interface Decision {
  readonly status: 'approved' | 'rejected'
  readonly decidedBy: string
  readonly note?: string
  readonly decidedAt: number
  /** An approved call may run until then. */
  readonly useBy: number
}

export type DecideResult =
  | { readonly type: 'decided', readonly record: ApprovalRecord }
  | { readonly type: 'not_pending', readonly record: ApprovalRecord }
  | { readonly type: 'not_found' }

export type ConsumeResult = 'consumed' | 'not_approved' | 'expired' | 'not_found'

/** `stale`: the live continuation is not the one expected (already redeemed, or superseded). */
export type ContinuationResult = 'replaced' | 'stale' | 'not_found'

export interface ApprovalStore {
  /** Store a new pending request unless its principal's or the total bound is reached. */
  create (request: ApprovalRequest, expiresAt: number, limits: ApprovalLimits): Promise<CreateResult>
  /** The record (a pending one past its expiry reads as `expired`); undefined once forgotten. */
  get (id: string): Promise<ApprovalRecord | undefined>
  /** Pending records, oldest first. */
  listPending (): Promise<ApprovalRecord[]>
  /** Decide a pending, unexpired record; anything else is reported, not changed. */
  decide (id: string, decision: Decision): Promise<DecideResult>
  /** Approved and unexpired becomes consumed, once. */
  consume (id: string, now: number): Promise<ConsumeResult>
  /** Make `next` the live continuation: only if `expected` is the live one (undefined: whichever is). */
  replaceContinuation (id: string, expected: string | undefined, next: string): Promise<ContinuationResult>
  /** Consumed becomes approved again: its call was refused before it began (queue full, shutdown). */
  unconsume (id: string): Promise<void>
  /** Pending records that expired since the last call, each reported once (for metrics and logs). */
  sweepExpired (now: number): Promise<ApprovalRecord[]>
  /** How many pending records there are now. */
  pendingCount (): Promise<number>
  close? (): Promise<void>
}

/** A pending record past its expiry is expired, whether or not a sweep has seen it yet. */
export function currentStatus (record: ApprovalRecord, now: number): ApprovalStatus {
  return record.status === 'pending' && record.expiresAt <= now ? 'expired' : record.status
}
