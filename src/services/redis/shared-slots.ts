import type { Redis } from 'ioredis'
import { createRedisClient, whenReady } from './client.js'
import { RedisSlotScheduler } from './slot-scheduler.js'

export interface SharedSlotSettings {
  readonly redisUrl: string
  readonly redisPrefix: string
  readonly slotLeaseMs: number
  readonly maxQueuePerSession: number
}

/** The two schedulers a catalog takes (`CatalogOptions.schedulers`), on one connection of their own. */
export interface SharedSlots {
  readonly domains: RedisSlotScheduler
  readonly tools: RedisSlotScheduler
  /** Resolves once connected (false after `timeoutMs`): calls before that answer 503. */
  ready (timeoutMs: number): Promise<boolean>
  close (): Promise<void>
}

/**
 * Concurrency domains and per-tool limits shared by every replica on `redisUrl`. Their own
 * connection: auto-pipelining batches the many small scripts of concurrent calls into few
 * writes, and a command timeout makes a silent connection (a partition) fail fast like a
 * refused one, instead of leaving calls hanging.
 */
export function createSharedSlots (settings: SharedSlotSettings, onLost: (domain: string) => void): SharedSlots {
  const redis: Redis = createRedisClient(settings.redisUrl, {}, { enableAutoPipelining: true, commandTimeout: 1_000 })
  const common = {
    redis,
    leaseMs: settings.slotLeaseMs,
    // A waiter renews its place by polling: several polls per lease, so one lost poll costs nothing.
    pollMs: Math.max(50, Math.min(500, Math.floor(settings.slotLeaseMs / 5))),
    onLost,
  }
  // Separate namespaces: a session may be named anything, even like a tool's limit domain.
  const domains = new RedisSlotScheduler({ ...common, namespace: `${settings.redisPrefix}slots:d:`, maxQueuePerDomain: settings.maxQueuePerSession })
  const tools = new RedisSlotScheduler({ ...common, namespace: `${settings.redisPrefix}slots:t:`, maxQueuePerDomain: 0 })
  return {
    domains,
    tools,
    ready: timeoutMs => whenReady(redis, timeoutMs),
    async close () {
      await Promise.all([domains.close(), tools.close()])
      redis.disconnect()
    },
  }
}
