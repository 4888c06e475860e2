import { GatewayError } from '../errors.js'
import { newId } from '../ids.js'
import { MemoryApprovalStore } from './memory-store.js'
import { currentStatus, type ApprovalLimits, type ApprovalRecord, type ApprovalRequest, type ApprovalStore, type ContinuationResult } from './store.js'
import { viewOf, type ApprovalView } from './view.js'

/** What happened to an approval, told to the host for its logs and metrics. */
export type ApprovalEvent =
  | { readonly type: 'requested', readonly record: ApprovalRecord }
  | { readonly type: 'decided', readonly record: ApprovalRecord }
  | { readonly type: 'expired', readonly record: ApprovalRecord }
  | { readonly type: 'executed', readonly record: ApprovalRecord, readonly by: string, readonly ok: boolean }

export interface ApprovalOptions {
  readonly store?: ApprovalStore
  /** How long a request waits for a decision, and how long an approval may then be used. */
  readonly ttlMs?: number
  readonly limits?: Partial<ApprovalLimits>
  /** The longest `Prefer: wait` honoured. */
  readonly maxWaitMs?: number
  /** How often a waiting call looks for a decision. */
  readonly pollMs?: number
  /** Off by default: the point of asking a person is that it is another person. */
  readonly allowSelfApproval?: boolean
  /**
   * Why nobody can decide an approval asked here (a process with no approvals page and no store
   * shared with one): a call that needs approval is then refused at once with this reason,
   * instead of waiting for a decision that cannot come. Absent: approvals can be decided.
   */
  readonly undecidable?: string
  readonly onEvent?: (event: ApprovalEvent) => void
  readonly now?: () => number
}

/** Who is deciding, as far as the core needs to know. */
export interface Decider {
  readonly id: string
}

const DEFAULT_APPROVAL_TTL_MS = 15 * 60 * 1000

/**
 * The approval service of one catalog: requests made by the pipeline's approval step, decided
 * by approvers through any adapter (REST routes, a page, a test). No HTTP in here; refusals are
 * GatewayErrors from the one catalogue.
 */
export class Approvals {
  readonly store: ApprovalStore
  readonly ttlMs: number
  readonly limits: ApprovalLimits
  readonly maxWaitMs: number
  readonly pollMs: number
  readonly allowSelfApproval: boolean
  /** Why nobody can decide an approval asked here (see `ApprovalOptions.undecidable`). */
  readonly undecidable: string | undefined
  readonly now: () => number
  readonly #onEvent: ((event: ApprovalEvent) => void) | undefined

  constructor (options: ApprovalOptions = {}) {
    this.store = options.store ?? new MemoryApprovalStore()
    this.ttlMs = options.ttlMs ?? DEFAULT_APPROVAL_TTL_MS
    this.limits = { maxPendingPerPrincipal: options.limits?.maxPendingPerPrincipal ?? 10, maxPendingTotal: options.limits?.maxPendingTotal ?? 1_000 }
    this.maxWaitMs = options.maxWaitMs ?? 60_000
    this.pollMs = options.pollMs ?? 250
    this.allowSelfApproval = options.allowSelfApproval === true
    this.undecidable = options.undecidable
    this.now = options.now ?? Date.now
    this.#onEvent = options.onEvent
  }

  /**
   * Open a pending approval; 429 when its principal, or everyone together, hold too many. With
   * an `id` (derived from the call's idempotency key) that is already kept, the kept record is
   * answered instead: a re-sent call asks once.
   */
  async request (fields: Omit<ApprovalRequest, 'id' | 'requestedAt'>, id = newId()): Promise<{ record: ApprovalRecord, created: boolean }> {
    await this.sweep()
    const now = this.now()
    const request: ApprovalRequest = { ...fields, id, requestedAt: now }
    const created = await guarded(() => this.store.create(request, now + this.ttlMs, this.limits))
    if (created === 'exists') {
      const kept = await this.get(id)
      if (kept !== undefined) return { record: kept, created: false }
      throw notFound(id) // forgotten between the two steps: vanishingly rare, and a retry asks anew
    }
    if (created === 'principal_full') {
      throw new GatewayError('TOOLGATE_TOO_MANY_APPROVALS', `"${request.requestedBy}" already has ${this.limits.maxPendingPerPrincipal} approvals waiting; retry once some are decided or expired`, { retryAfter: 30 })
    }
    if (created === 'full') {
      throw new GatewayError('TOOLGATE_TOO_MANY_APPROVALS', `pending approvals fill the room of ${this.limits.maxPendingTotal} (its last eighth is kept for principals with none waiting); retry once some are decided or expired`, { retryAfter: 30 })
    }
    const record: ApprovalRecord = { ...request, status: 'pending', expiresAt: now + this.ttlMs }
    this.emit({ type: 'requested', record })
    return { record, created: true }
  }

  /** One record as it stands now (undefined when unknown or forgotten). */
  async get (id: string): Promise<ApprovalRecord | undefined> {
    if (!APPROVAL_ID.test(id)) return undefined
    await this.sweep()
    const record = await guarded(() => this.store.get(id))
    return record === undefined ? undefined : { ...record, status: currentStatus(record, this.now()) }
  }

  async listPending (): Promise<ApprovalRecord[]> {
    await this.sweep()
    return await guarded(() => this.store.listPending())
  }

  /** May `decider` decide `record`? Says why not, or undefined. */
  refusal (record: ApprovalRecord, decider: Decider): GatewayError | undefined {
    if (record.requestedBy === decider.id && !this.allowSelfApproval) {
      return new GatewayError('TOOLGATE_SELF_APPROVAL', 'nobody decides their own approval request: ask another approver')
    }
    if (record.approvers.length > 0 && !record.approvers.includes(decider.id)) {
      return new GatewayError('TOOLGATE_FORBIDDEN', `only ${record.approvers.join(', ')} may decide this approval`)
    }
    return undefined
  }

  /** Approve or reject a pending approval: 404 unknown, 403 not this decider's, 409 already settled. */
  async decide (id: string, decider: Decider, status: 'approved' | 'rejected', note?: string): Promise<ApprovalView> {
    const record = await this.get(id)
    if (record === undefined) throw notFound(id)
    const refused = this.refusal(record, decider)
    if (refused !== undefined) throw refused
    const now = this.now()
    const result = await guarded(() => this.store.decide(id, { status, decidedBy: decider.id, decidedAt: now, useBy: now + this.ttlMs, ...(note === undefined ? {} : { note }) }))
    if (result.type === 'not_found') throw notFound(id)
    if (result.type === 'not_pending') {
      throw new GatewayError('TOOLGATE_APPROVAL_DECIDED', `approval "${id}" is ${currentStatus(result.record, now)}, not pending`)
    }
    this.emit({ type: 'decided', record: result.record })
    return viewOf(result.record)
  }

  /**
   * Poll the store (shared by replicas, so a decision made anywhere is seen) until the approval
   * is decided, `waitMs` passed, or `signal` aborts (then it rejects with the signal's reason).
   */
  async awaitDecision (id: string, waitMs: number, signal: AbortSignal): Promise<ApprovalRecord | undefined> {
    const deadline = this.now() + waitMs
    for (;;) {
      await sleep(Math.min(this.pollMs, Math.max(0, deadline - this.now())), signal)
      const record = await this.get(id)
      if (record === undefined || record.status !== 'pending' || this.now() >= deadline) return record
    }
  }

  /** See `ApprovalStore.replaceContinuation`; an unreachable store is a 503. */
  async replaceContinuation (id: string, expected: string | undefined, next: string): Promise<ContinuationResult> {
    return await guarded(() => this.store.replaceContinuation(id, expected, next))
  }

  /** Count and log pending approvals that expired undecided (each reported once, by one replica). */
  async sweep (): Promise<void> {
    let expired: ApprovalRecord[]
    try {
      expired = await this.store.sweepExpired(this.now())
    } catch {
      return // a store outage shows on the operation that needs it; the sweep retries next time
    }
    for (const record of expired) this.emit({ type: 'expired', record })
  }

  emit (event: ApprovalEvent): void {
    try {
      this.#onEvent?.(event)
    } catch { /* telemetry must not fail a call or a decision */ }
  }
}

/** Ids are made by `newId`: 32 lowercase hex characters. Anything else is unknown without a lookup. */
export const APPROVAL_ID = /^[0-9a-f]{32}$/

export function notFound (id: string): GatewayError {
  return new GatewayError('TOOLGATE_APPROVAL_NOT_FOUND', `no approval "${id.slice(0, 64)}" (never requested, or forgotten after it settled)`)
}

/** A store that cannot be reached fails closed: 503, nothing is approved or run. */
export async function guarded<T> (operation: () => Promise<T>): Promise<T> {
  try {
    return await operation()
  } catch (error) {
    throw new GatewayError('TOOLGATE_STORE_UNAVAILABLE', 'the approval store cannot be reached', { retryAfter: 1 }, { cause: error })
  }
}

function sleep (ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    const reason = (): unknown => signal.reason
    if (signal.aborted) { reject(reason()); return }
    const onAbort = (): void => { clearTimeout(timer); reject(reason()) }
    const timer = setTimeout(() => { signal.removeEventListener('abort', onAbort); resolve() }, ms)
    signal.addEventListener('abort', onAbort, { once: true })
  })
}
