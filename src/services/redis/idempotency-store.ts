import type { Redis } from 'ioredis'
import type { Claim, IdempotencyStore, StoredResult } from '../../core/idempotency/store.js'

interface Stored {
  readonly f: string
  readonly r?: StoredResult
}

/** Claim atomically: return what holds the key, or take it (SET NX PX in one step). */
const CLAIM = `
local held = redis.call('GET', KEYS[1])
if held then return held end
redis.call('SET', KEYS[1], ARGV[1], 'PX', ARGV[2])
return false`

/**
 * Idempotency records in Redis, shared by every replica: the claim is one Lua script, so of
 * two replicas that see the same key at once exactly one runs the call.
 */
export class RedisIdempotencyStore implements IdempotencyStore {
  readonly #redis: Redis
  readonly #prefix: string

  constructor (redis: Redis, prefix: string) {
    this.#redis = redis
    this.#prefix = `${prefix}idem:`
  }

  async claim (key: string, fingerprint: string, ttlMs: number): Promise<Claim> {
    const held = await this.#redis.eval(CLAIM, 1, this.#prefix + key, JSON.stringify({ f: fingerprint }), String(ttlMs)) as string | null
    if (held === null) return { state: 'claimed' }
    const stored = JSON.parse(held) as Stored
    return stored.r === undefined ? { state: 'running', fingerprint: stored.f } : { state: 'done', fingerprint: stored.f, result: stored.r }
  }

  async complete (key: string, fingerprint: string, result: StoredResult, ttlMs: number): Promise<void> {
    const stored: Stored = { f: fingerprint, r: result }
    await this.#redis.set(this.#prefix + key, JSON.stringify(stored), 'PX', ttlMs)
  }

  async release (key: string): Promise<void> {
    await this.#redis.del(this.#prefix + key)
  }
}
