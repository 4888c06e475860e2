import { randomUUID } from 'node:crypto'
import { Redis } from 'ioredis'
import { IN_CI } from '../ci.js'

/** Tests that need Redis use REDIS_URL, or this project's machines' default. */
export const REDIS_URL = process.env.REDIS_URL ?? 'redis://127.0.0.1:6379'

/** Whether Redis answers; on a machine without it these tests skip and say why. */
async function redisAvailable (): Promise<boolean> {
  const probe = new Redis(REDIS_URL, { lazyConnect: true, enableOfflineQueue: false, maxRetriesPerRequest: 0, connectTimeout: 1000, retryStrategy: () => null })
  try {
    await probe.connect()
    return (await probe.ping()) === 'PONG'
  } catch {
    return false
  } finally {
    probe.disconnect()
  }
}

export const HAVE_REDIS = await redisAvailable()
if (!HAVE_REDIS && IN_CI) {
  throw new Error(`CI: no Redis answers at ${REDIS_URL}; the Redis tests must run (set REDIS_URL)`)
}
if (!HAVE_REDIS) console.warn(`[skip] Redis tests: no Redis answers at ${REDIS_URL} (set REDIS_URL to run them)`)

/** A key prefix of its own per test run, so runs never see each other's state. */
export function testPrefix (): string {
  return `toolgate:test:${randomUUID().slice(0, 8)}:`
}

/** Delete every key under `prefix` (best effort). */
export async function cleanPrefix (prefix: string): Promise<void> {
  const redis = new Redis(REDIS_URL, { maxRetriesPerRequest: 1 })
  try {
    const keys = await redis.keys(`${prefix}*`)
    if (keys.length > 0) await redis.del(...keys)
  } finally {
    redis.disconnect()
  }
}
