import type { Redis } from 'ioredis'
import { FIRST_RECORDS, reserveOf } from '../../core/idempotency/shares.js'
import type { Claim, IdempotencyStore, StoredResult } from '../../core/idempotency/store.js'

interface Stored {
  readonly f: string
  readonly r?: StoredResult
}

export interface RedisStoreLimits {
  /** Most records at once over all owners, and one owner's share (see `core/idempotency/shares.ts`). */
  readonly maxEntries: number
  readonly maxEntriesPerOwner: number
}

/**
 * Claim atomically: return what holds the key, or take it, within the owner's share and the
 * store's bound (the rule of `shares.ts`, written again in Lua). Each owner's records, and all
 * records, are indexed by expiry in a sorted set, swept of expired members on each claim.
 * Times are Redis's own clock, never a replica's. KEYS: record, owner index, store index.
 * ARGV: stored JSON, TTL, max, per owner, first records, reserve.
 */
const CLAIM = `
local held = redis.call('GET', KEYS[1])
if held then return {'held', held} end
local time = redis.call('TIME')
local now = tonumber(time[1]) * 1000 + math.floor(tonumber(time[2]) / 1000)
redis.call('ZREMRANGEBYSCORE', KEYS[2], '-inf', now)
redis.call('ZREMRANGEBYSCORE', KEYS[3], '-inf', now)
local ttl = tonumber(ARGV[2])
local function soonest (index)
  local first = redis.call('ZRANGE', index, 0, 0, 'WITHSCORES')
  if first[2] then return tostring(math.max(0, tonumber(first[2]) - now)) end
  return '0'
end
local mine = redis.call('ZCARD', KEYS[2])
local all = redis.call('ZCARD', KEYS[3])
local max = tonumber(ARGV[3])
if all + 1 > max then return {'store', soonest(KEYS[3])} end
if mine + 1 > tonumber(ARGV[4]) then return {'owner', soonest(KEYS[2])} end
if mine >= tonumber(ARGV[5]) and all + 1 > max - tonumber(ARGV[6]) then return {'store', soonest(KEYS[3])} end
redis.call('SET', KEYS[1], ARGV[1], 'PX', ttl)
${INDEX('now + ttl')}
return false`

/** Index KEYS[1] in the owner's and the store's sets, each set living as long as its newest member. */
function INDEX (expiry: string): string {
  return `for i = 2, 3 do
  redis.call('ZADD', KEYS[i], ${expiry}, KEYS[1])
  if redis.call('PTTL', KEYS[i]) < ttl then redis.call('PEXPIRE', KEYS[i], ttl) end
end`
}

/** Store the final answer, its lifetime (and index entries) starting again now. ARGV: stored JSON, TTL. */
const COMPLETE = `
local time = redis.call('TIME')
local now = tonumber(time[1]) * 1000 + math.floor(tonumber(time[2]) / 1000)
local ttl = tonumber(ARGV[2])
redis.call('SET', KEYS[1], ARGV[1], 'PX', ttl)
${INDEX('now + ttl')}`

const RELEASE = `
redis.call('DEL', KEYS[1])
redis.call('ZREM', KEYS[2], KEYS[1])
redis.call('ZREM', KEYS[3], KEYS[1])`

/**
 * Idempotency records in Redis, shared by every replica: each change is one Lua script, so of
 * two replicas that see the same key at once exactly one runs the call, and the bound on
 * records (overall and per owner) holds across replicas.
 */
export class RedisIdempotencyStore implements IdempotencyStore {
  readonly #redis: Redis
  readonly #prefix: string
  readonly #limits: RedisStoreLimits

  constructor (redis: Redis, prefix: string, limits: RedisStoreLimits = { maxEntries: 1_000_000, maxEntriesPerOwner: 250_000 }) {
    this.#redis = redis
    this.#prefix = `${prefix}idem:`
    this.#limits = { maxEntries: limits.maxEntries, maxEntriesPerOwner: Math.min(limits.maxEntriesPerOwner, limits.maxEntries) }
  }

  async claim (key: string, fingerprint: string, ttlMs: number, owner = ''): Promise<Claim> {
    const { maxEntries, maxEntriesPerOwner } = this.#limits
    const answer = await this.#redis.eval(CLAIM, 3, ...this.#keys(key, owner), JSON.stringify({ f: fingerprint }), String(ttlMs),
      String(maxEntries), String(maxEntriesPerOwner), String(FIRST_RECORDS), String(reserveOf(maxEntries))) as [string, string] | null
    if (answer === null) return { state: 'claimed' }
    const [kind, value] = answer
    if (kind === 'owner' || kind === 'store') return { state: 'full', scope: kind, retryAfterMs: Number(value) }
    const stored = JSON.parse(value) as Stored
    return stored.r === undefined ? { state: 'running', fingerprint: stored.f } : { state: 'done', fingerprint: stored.f, result: stored.r }
  }

  async complete (key: string, fingerprint: string, result: StoredResult, ttlMs: number, owner = ''): Promise<void> {
    const stored: Stored = { f: fingerprint, r: result }
    await this.#redis.eval(COMPLETE, 3, ...this.#keys(key, owner), JSON.stringify(stored), String(ttlMs))
  }

  async release (key: string, owner = ''): Promise<void> {
    await this.#redis.eval(RELEASE, 3, ...this.#keys(key, owner))
  }

  #keys (key: string, owner: string): [string, string, string] {
    return [this.#prefix + key, `${this.#prefix}owner:${owner}`, `${this.#prefix}all`]
  }
}
