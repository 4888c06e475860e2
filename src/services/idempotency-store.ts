import type { Redis } from 'ioredis'
import { MemoryIdempotencyStore } from '../core/idempotency/memory-store.js'
import type { IdempotencyStore } from '../core/idempotency/store.js'
import type { Config } from './config.js'
import { RedisIdempotencyStore } from './redis/idempotency-store.js'

type StoreConfig = Pick<Config, 'redisPrefix' | 'idempotencyMaxEntries' | 'idempotencyMaxEntriesPerPrincipal' | 'idempotencyMaxBytes' | 'idempotencyMaxBytesPerPrincipal'>

/**
 * The gateway's idempotency store: in Redis when it has one (shared by replicas), else in
 * memory. Either way records are bounded overall and per principal, shared by one rule
 * (`core/idempotency/shares.ts`); memory also bounds bytes.
 */
export function idempotencyStoreOf (config: StoreConfig, redis: Redis | undefined): IdempotencyStore {
  const maxEntries = config.idempotencyMaxEntries
  const maxEntriesPerOwner = config.idempotencyMaxEntriesPerPrincipal ?? Math.floor(maxEntries / 4)
  if (redis !== undefined) return new RedisIdempotencyStore(redis, config.redisPrefix, { maxEntries, maxEntriesPerOwner })
  return new MemoryIdempotencyStore({ maxEntries, maxEntriesPerOwner, maxBytes: config.idempotencyMaxBytes, maxBytesPerOwner: config.idempotencyMaxBytesPerPrincipal })
}
