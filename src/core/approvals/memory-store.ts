import { pendingRefusal, type ApprovalLimits, type ApprovalRecord, type ApprovalRequest, type ApprovalStore, type ConsumeResult, type ContinuationResult, type CreateResult, type DecideResult, type Decision } from './store.js'

/**
 * Approvals in this process only: a restart forgets every one of them (docs/approvals.md says so).
 * Bounded: pending records by the limits given to `create`, shared by `pendingRefusal`; decided ones are kept for
 * `retainMs` after they settle (so a repeat of an executed call still finds its approval), and
 * at most `maxRecords` in all, the oldest settled going first.
 */
export class MemoryApprovalStore implements ApprovalStore {
  readonly #records = new Map<string, ApprovalRecord>()
  readonly #pendingBy = new Map<string, number>()
  /** Ids of pending records: expiry looks at these only, never at every record kept. */
  readonly #pending = new Set<string>()
  readonly #retainMs: number
  readonly #maxRecords: number
  readonly #now: () => number

  constructor (options: { retainMs?: number, maxRecords?: number, now?: () => number } = {}) {
    this.#retainMs = options.retainMs ?? 24 * 60 * 60 * 1000
    this.#maxRecords = options.maxRecords ?? 100_000
    this.#now = options.now ?? Date.now
  }

  async create (request: ApprovalRequest, expiresAt: number, limits: ApprovalLimits): Promise<CreateResult> {
    this.#expire(this.#now())
    if (this.#records.has(request.id)) return 'exists'
    const pending = this.#pendingBy.get(request.requestedBy) ?? 0
    const refusal = pendingRefusal(this.#pendingTotal(), pending, limits)
    if (refusal !== undefined) return refusal
    this.#forgetOld()
    this.#records.set(request.id, { ...request, status: 'pending', expiresAt })
    this.#pending.add(request.id)
    this.#pendingBy.set(request.requestedBy, pending + 1)
    return 'created'
  }

  async get (id: string): Promise<ApprovalRecord | undefined> {
    this.#expire(this.#now())
    return this.#records.get(id)
  }

  async listPending (): Promise<ApprovalRecord[]> {
    this.#expire(this.#now())
    return [...this.#pending].map(id => this.#records.get(id)!)
  }

  async decide (id: string, decision: Decision): Promise<DecideResult> {
    this.#expire(decision.decidedAt)
    const record = this.#records.get(id)
    if (record === undefined) return { type: 'not_found' }
    if (record.status !== 'pending') return { type: 'not_pending', record }
    const decided: ApprovalRecord = {
      ...record, status: decision.status, decidedBy: decision.decidedBy, decidedAt: decision.decidedAt,
      expiresAt: decision.status === 'approved' ? decision.useBy : record.expiresAt,
      ...(decision.note === undefined ? {} : { note: decision.note }),
    }
    this.#settle(record, decided)
    return { type: 'decided', record: decided }
  }

  async consume (id: string, now: number): Promise<ConsumeResult> {
    const record = this.#records.get(id)
    if (record === undefined) return 'not_found'
    if (record.status !== 'approved') return 'not_approved'
    if (record.expiresAt <= now) return 'expired'
    this.#records.set(id, { ...record, status: 'consumed', consumedAt: now })
    return 'consumed'
  }

  async replaceContinuation (id: string, expected: string | undefined, next: string): Promise<ContinuationResult> {
    const record = this.#records.get(id)
    if (record === undefined) return 'not_found'
    if (expected !== undefined && record.continuation !== expected) return 'stale'
    this.#records.set(id, { ...record, continuation: next }) // same key: the settling order is kept
    return 'replaced'
  }

  async unconsume (id: string): Promise<void> {
    const record = this.#records.get(id)
    if (record?.status !== 'consumed') return
    const { consumedAt: _, ...approved } = record
    this.#records.set(id, { ...approved, status: 'approved' })
  }

  async sweepExpired (now: number): Promise<ApprovalRecord[]> {
    return this.#expire(now)
  }

  async pendingCount (): Promise<number> {
    this.#expire(this.#now())
    return this.#pendingTotal()
  }

  #pendingTotal (): number {
    return this.#pending.size
  }

  /**
   * Pending past expiry become expired: returned once, here, for metrics and logs. Settled
   * records past their retention go too: Map order is settling order, so the scan stops at
   * the first settled record still kept (pending ones, bounded, are stepped over).
   */
  #expire (now: number): ApprovalRecord[] {
    const expired: ApprovalRecord[] = []
    for (const id of [...this.#pending]) {
      const record = this.#records.get(id)!
      if (record.expiresAt > now) continue
      const settled: ApprovalRecord = { ...record, status: 'expired' }
      this.#settle(record, settled)
      expired.push(settled)
    }
    for (const record of this.#records.values()) {
      if (record.status === 'pending') continue
      if (settledAt(record) + this.#retainMs > now) break
      this.#records.delete(record.id)
    }
    return expired
  }

  /** Re-inserted at the end: Map order is then the order in which records settled. */
  #settle (pending: ApprovalRecord, settled: ApprovalRecord): void {
    this.#records.delete(pending.id)
    this.#records.set(pending.id, settled)
    this.#pending.delete(pending.id)
    const left = (this.#pendingBy.get(pending.requestedBy) ?? 1) - 1
    if (left === 0) this.#pendingBy.delete(pending.requestedBy)
    else this.#pendingBy.set(pending.requestedBy, left)
  }

  #forgetOld (): void {
    if (this.#records.size < this.#maxRecords) return
    for (const record of this.#records.values()) {
      if (record.status !== 'pending') this.#records.delete(record.id)
      if (this.#records.size < this.#maxRecords) return
    }
  }
}

function settledAt (record: ApprovalRecord): number {
  return Math.max(record.expiresAt, record.decidedAt ?? 0, record.consumedAt ?? 0)
}
