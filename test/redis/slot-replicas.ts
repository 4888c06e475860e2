import type { Redis } from 'ioredis'
import type { Lease } from '../../src/core/scheduler.js'
import type { ConcurrencyClass } from '../../src/core/tool.js'
import { createRedisClient, whenReady } from '../../src/services/redis/client.js'
import { RedisSlotScheduler } from '../../src/services/redis/slot-scheduler.js'

/** One "replica": its own connection and scheduler on a shared namespace, as a gateway process has. */
export interface Replica {
  readonly redis: Redis
  readonly slots: RedisSlotScheduler
  readonly lost: string[]
}

export async function replica (url: string, namespace: string, options: { leaseMs?: number, pollMs?: number, maxQueue?: number } = {}): Promise<Replica> {
  const redis = createRedisClient(url, {}, { enableAutoPipelining: true, commandTimeout: 1_000 })
  const lost: string[] = []
  const slots = new RedisSlotScheduler({
    redis, namespace, leaseMs: options.leaseMs ?? 2_000, pollMs: options.pollMs ?? 100, maxQueuePerDomain: options.maxQueue ?? 64, onLost: domain => { lost.push(domain) },
  })
  await whenReady(redis, 2_000)
  return { redis, slots, lost }
}

export async function closeReplica (r: Replica): Promise<void> {
  await r.slots.close()
  r.redis.disconnect()
}

/** The slot, or the refusal as a rejection. */
export function acquire (r: Replica, domain: string, cls: ConcurrencyClass, maxQueue?: number): { lease: Promise<Lease>, cancel: () => void } {
  let cancel = (): void => {}
  const lease = new Promise<Lease>((resolve, reject) => { cancel = r.slots.request(domain, cls, resolve, maxQueue, reject).cancel })
  return { lease, cancel }
}

export const SHARED: ConcurrencyClass = { type: 'shared' }
export const EXCLUSIVE: ConcurrencyClass = { type: 'exclusive' }
export const group = (toolId: string, limit: number): ConcurrencyClass => ({ type: 'group', toolId, limit })

/** Resolves true if `promise` settles within `ms`. */
export async function settlesWithin (promise: Promise<unknown>, ms: number): Promise<boolean> {
  let timer: NodeJS.Timeout | undefined
  const result = await Promise.race([promise.then(() => true, () => true), new Promise<boolean>(resolve => { timer = setTimeout(() => { resolve(false) }, ms) })])
  clearTimeout(timer)
  return result
}

/** Until `condition` holds, checked every 5 ms; throws after `ms`. */
export async function until (condition: () => boolean | Promise<boolean>, ms = 10_000): Promise<void> {
  const deadline = Date.now() + ms
  while (!await condition()) {
    if (Date.now() > deadline) throw new Error(`condition not reached within ${ms} ms`)
    await new Promise(resolve => setTimeout(resolve, 5))
  }
}
