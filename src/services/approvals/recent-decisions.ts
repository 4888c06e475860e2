import type { Redis } from 'ioredis'
import type { ApprovalEvent } from '../../core/approvals/approvals.js'
import type { ApprovalRecord } from '../../core/approvals/store.js'

/** One settled approval as the page lists it under "recent decisions". */
export interface RecentDecision {
  readonly id: string
  readonly tool: string
  readonly status: 'approved' | 'rejected' | 'expired'
  readonly requestedBy: string
  readonly decidedBy?: string
  readonly note?: string
  /** Epoch ms of the decision (or the expiry). */
  readonly at: number
}

/** The last decisions, newest first; shared by replicas when kept in Redis. */
export interface RecentDecisions {
  add (decision: RecentDecision): Promise<void>
  list (): Promise<RecentDecision[]>
}

const KEPT = 50

/** The decision an event settles, if it settles one. */
export function decisionOf (event: ApprovalEvent): RecentDecision | undefined {
  if (event.type !== 'decided' && event.type !== 'expired') return undefined
  const record: ApprovalRecord = event.record
  const status = event.type === 'expired' ? 'expired' : record.status
  if (status !== 'approved' && status !== 'rejected' && status !== 'expired') return undefined
  return {
    id: record.id,
    tool: record.tool,
    status,
    requestedBy: record.requestedBy,
    ...(record.decidedBy === undefined ? {} : { decidedBy: record.decidedBy }),
    ...(record.note === undefined ? {} : { note: record.note }),
    at: record.decidedAt ?? record.expiresAt,
  }
}

export class MemoryRecentDecisions implements RecentDecisions {
  #kept: RecentDecision[] = []

  async add (decision: RecentDecision): Promise<void> {
    this.#kept = [decision, ...this.#kept].slice(0, KEPT)
  }

  async list (): Promise<RecentDecision[]> {
    return [...this.#kept]
  }
}

/** A capped Redis list (LPUSH + LTRIM): every replica's page shows every replica's decisions. */
export class RedisRecentDecisions implements RecentDecisions {
  readonly #key: string

  constructor (readonly redis: Redis, prefix: string) {
    this.#key = `${prefix}approvals:recent`
  }

  async add (decision: RecentDecision): Promise<void> {
    await this.redis.multi().lpush(this.#key, JSON.stringify(decision)).ltrim(this.#key, 0, KEPT - 1).exec()
  }

  async list (): Promise<RecentDecision[]> {
    const items = await this.redis.lrange(this.#key, 0, KEPT - 1)
    return items.flatMap(item => {
      try {
        return [JSON.parse(item) as RecentDecision]
      } catch {
        return []
      }
    })
  }
}
