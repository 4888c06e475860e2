import { createHash } from 'node:crypto'
import type { Redis } from 'ioredis'

/**
 * Who delivers a message to a URL: the first replica to claim it. Without Redis there is one
 * process and every claim succeeds.
 */
export type DeliveryClaim = (messageId: string, url: string) => Promise<boolean>

/** How long a claim is remembered: far beyond any retry schedule. */
const CLAIM_TTL_MS = 24 * 60 * 60 * 1000

/**
 * Claims shared by replicas on one Redis (SET NX): one delivery per event and URL, whichever
 * replica heard of it. A claim Redis cannot answer is taken: a duplicate the receiver drops by
 * its `webhook-id` is better than an approver never told.
 */
export function redisClaim (redis: Redis, prefix: string): DeliveryClaim {
  return async (messageId, url) => {
    const key = `${prefix}webhook:${createHash('sha256').update(url).digest('base64url').slice(0, 22)}:${messageId}`
    try {
      return await redis.set(key, '1', 'PX', CLAIM_TTL_MS, 'NX') === 'OK'
    } catch {
      return true
    }
  }
}
