import { createHash } from 'node:crypto'
import type { Redis } from 'ioredis'

/**
 * JSON values under ids, kept by the gateway: sign-in flows and sessions (the browser holds only
 * the random id, in an HttpOnly cookie), and a person's links to upstream accounts. Keys are the
 * SHA-256 of the id, so a read of the store gives no cookie that works.
 */
export interface KeyedStore {
  get (id: string): Promise<unknown>
  set (id: string, value: unknown, ttlMs: number): Promise<void>
  /** Set only when nothing is there: true when this value was stored (the first writer wins). */
  setIfAbsent (id: string, value: unknown, ttlMs: number): Promise<boolean>
  delete (id: string): Promise<void>
}

function keyOf (id: string): string {
  return createHash('sha256').update(id).digest('base64url')
}

/** In this process (one replica; lost on restart). Bounded: the oldest entry goes first. */
export class MemoryKeyedStore implements KeyedStore {
  readonly #entries = new Map<string, { value: string, expiresAt: number }>()

  constructor (readonly maxEntries = 10_000, readonly now: () => number = Date.now) {}

  async get (id: string): Promise<unknown> {
    const key = keyOf(id)
    const entry = this.#entries.get(key)
    if (entry === undefined) return undefined
    if (entry.expiresAt <= this.now()) {
      this.#entries.delete(key)
      return undefined
    }
    return JSON.parse(entry.value)
  }

  async set (id: string, value: unknown, ttlMs: number): Promise<void> {
    const key = keyOf(id)
    this.#entries.delete(key)
    while (this.#entries.size >= this.maxEntries) this.#entries.delete(this.#entries.keys().next().value!)
    this.#entries.set(key, { value: JSON.stringify(value), expiresAt: this.now() + ttlMs })
  }

  async setIfAbsent (id: string, value: unknown, ttlMs: number): Promise<boolean> {
    if (await this.get(id) !== undefined) return false
    await this.set(id, value, ttlMs)
    return true
  }

  async delete (id: string): Promise<void> {
    this.#entries.delete(keyOf(id))
  }
}

/** In Redis, shared by replicas: a sign-in begun on one finishes on any. */
export class RedisKeyedStore implements KeyedStore {
  constructor (readonly redis: Redis, readonly prefix: string) {}

  async get (id: string): Promise<unknown> {
    const value = await this.redis.get(this.prefix + keyOf(id))
    return value === null ? undefined : JSON.parse(value)
  }

  async set (id: string, value: unknown, ttlMs: number): Promise<void> {
    await this.redis.set(this.prefix + keyOf(id), JSON.stringify(value), 'PX', Math.max(1, Math.round(ttlMs)))
  }

  async setIfAbsent (id: string, value: unknown, ttlMs: number): Promise<boolean> {
    return await this.redis.set(this.prefix + keyOf(id), JSON.stringify(value), 'PX', Math.max(1, Math.round(ttlMs)), 'NX') === 'OK'
  }

  async delete (id: string): Promise<void> {
    await this.redis.del(this.prefix + keyOf(id))
  }
}
