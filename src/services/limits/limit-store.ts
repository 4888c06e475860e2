import type { Redis } from 'ioredis'
import { MemoryLimitStore } from '../../core/limits/memory-store.js'
import type { LimitStore } from '../../core/limits/store.js'
import type { Config } from '../config.js'
import { RedisLimitStore } from '../redis/limit-store.js'

/**
 * Where the counts of limits live: in Redis when the gateway has it, so that every replica
 * decides against the same counts in one script; else in process, bounded by `LIMIT_MAX_KEYS`.
 */
export function limitStoreOf (config: Pick<Config, 'redisPrefix' | 'limitMaxKeys'>, redis: Redis | undefined): LimitStore {
  if (redis !== undefined) return new RedisLimitStore(redis, `${config.redisPrefix}limit:`)
  return new MemoryLimitStore({ maxKeys: config.limitMaxKeys })
}
