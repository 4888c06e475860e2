import type { Claim, IdempotencyStore, StoredResult } from './store.js'

interface Entry {
  readonly fingerprint: string
  result: StoredResult | undefined
  expiresAt: number
}

/**
 * The embedded store: one process, bounded. Map order is insertion order, so the first
 * entries are the least recently written; when full, the oldest *finished* entry goes.
 * Running claims are never evicted (that could let a retry run a second time); there are
 * never more of them than calls in flight.
 */
export class MemoryIdempotencyStore implements IdempotencyStore {
  readonly #entries = new Map<string, Entry>()
  readonly #maxEntries: number
  readonly #now: () => number

  constructor (options: { maxEntries?: number, now?: () => number } = {}) {
    this.#maxEntries = options.maxEntries ?? 100_000
    this.#now = options.now ?? Date.now
  }

  get size (): number {
    return this.#entries.size
  }

  async claim (key: string, fingerprint: string, ttlMs: number): Promise<Claim> {
    const existing = this.#live(key)
    if (existing !== undefined) {
      return existing.result === undefined
        ? { state: 'running', fingerprint: existing.fingerprint }
        : { state: 'done', fingerprint: existing.fingerprint, result: existing.result }
    }
    this.#evictIfFull()
    this.#entries.set(key, { fingerprint, result: undefined, expiresAt: this.#now() + ttlMs })
    return { state: 'claimed' }
  }

  async complete (key: string, fingerprint: string, result: StoredResult, ttlMs: number): Promise<void> {
    this.#entries.delete(key)
    this.#entries.set(key, { fingerprint, result, expiresAt: this.#now() + ttlMs })
  }

  async release (key: string): Promise<void> {
    this.#entries.delete(key)
  }

  #live (key: string): Entry | undefined {
    const entry = this.#entries.get(key)
    if (entry !== undefined && entry.expiresAt <= this.#now()) {
      this.#entries.delete(key)
      return undefined
    }
    return entry
  }

  #evictIfFull (): void {
    if (this.#entries.size < this.#maxEntries) return
    const now = this.#now()
    for (const [key, entry] of this.#entries) {
      if (entry.expiresAt <= now || entry.result !== undefined) {
        this.#entries.delete(key)
        if (this.#entries.size < this.#maxEntries) return
      }
    }
  }
}
