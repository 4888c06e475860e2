import { GatewayError } from './errors.js'
import { shareRefusal } from './idempotency/shares.js'

/**
 * Fair shares of a tool's queue (`toolLimits.<id>.maxQueue`, over every session and principal),
 * by the rule of `idempotency/shares.ts`: one principal may have at most a quarter of the
 * queue waiting, and the last eighth is kept for principals with nothing waiting yet, so one
 * caller flooding a tool cannot make everyone else's calls of it answer 429. Per process: with
 * shared slots the queue's own bound still holds across replicas.
 */
export class QueueShares {
  readonly #waiting = new Map<string, Map<string, number>>()

  /** Count one call of `owner` waiting in `queue`; throws 429 past its share. Returns the call's leave. */
  enter (queue: string, owner: string, maxQueue: number): () => void {
    let owners = this.#waiting.get(queue)
    if (owners === undefined) this.#waiting.set(queue, owners = new Map<string, number>())
    const mine = owners.get(owner) ?? 0
    let used = 0
    for (const count of owners.values()) used += count
    const refusal = shareRefusal({ used, ownerUsed: mine, cost: 1, max: maxQueue, perOwner: Math.max(1, Math.floor(maxQueue / 4)), firstRecords: mine === 0 })
    if (refusal !== undefined) {
      const whose = refusal === 'owner' ? 'your share of' : 'the room left in'
      throw new GatewayError('TOOLGATE_QUEUE_FULL', `your calls fill ${whose} the queue of "${queue}"; retry shortly`, { retryAfter: 1 })
    }
    owners.set(owner, mine + 1)
    let left = false
    return () => {
      if (left) return
      left = true
      const now = (owners.get(owner) ?? 1) - 1
      if (now > 0) owners.set(owner, now)
      else owners.delete(owner)
      if (owners.size === 0) this.#waiting.delete(queue)
    }
  }
}
