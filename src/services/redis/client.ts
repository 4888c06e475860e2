import { createRequire } from 'node:module'
import type * as IORedis from 'ioredis'
import type { Redis, RedisOptions } from 'ioredis'

// ioredis is loaded on first use: a gateway without REDIS_URL never pays its ~7 MB.
const require = createRequire(import.meta.url)

/**
 * A Redis client that fails fast instead of queueing: while Redis is unreachable a command
 * rejects at once (the caller answers 503), and the client keeps reconnecting in the
 * background, so the gateway recovers without a restart.
 */
export function createRedisClient (url: string, events: RedisEvents = {}, overrides: RedisOptions = {}): Redis {
  const { Redis: RedisClient } = require('ioredis') as typeof IORedis
  const client = new RedisClient(url, {
    enableOfflineQueue: false,
    maxRetriesPerRequest: 1,
    connectTimeout: 2_000,
    retryStrategy: attempt => Math.min(attempt * 100, 2_000),
    lazyConnect: false,
    ...overrides,
  })
  // Without a listener ioredis prints every failed reconnect to stderr. Report the transitions
  // (up to down, down to up) once each, not every attempt.
  let down = false
  client.on('error', (error: Error) => {
    if (down) return
    down = true
    events.down?.(error)
  })
  client.on('ready', () => {
    if (!down) return
    down = false
    events.up?.()
  })
  return client
}

export interface RedisEvents {
  /** Redis became unreachable (called once per outage). */
  down?: (error: Error) => void
  /** Redis is back after an outage. */
  up?: () => void
}

/** Wait until the client is ready, up to `timeoutMs`; a Redis that is down at start-up is not fatal. */
export async function whenReady (client: Redis, timeoutMs: number): Promise<boolean> {
  if (client.status === 'ready') return true
  return await new Promise<boolean>(resolve => {
    const timer = setTimeout(() => { client.off('ready', onReady); resolve(false) }, timeoutMs)
    const onReady = (): void => { clearTimeout(timer); resolve(true) }
    client.once('ready', onReady)
  })
}
