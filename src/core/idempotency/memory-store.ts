import { FIRST_RECORDS, shareRefusal } from './shares.js'
import type { Claim, IdempotencyStore, StoredResult } from './store.js'

interface Holding { bytes: number, entries: number }

interface Entry {
  readonly fingerprint: string
  readonly owner: string
  result: StoredResult | undefined
  expiresAt: number
  bytes: number
}

export interface MemoryStoreOptions {
  /** Most records at once, over all owners. */
  readonly maxEntries?: number
  /** Most records one owner (a principal) may hold; a new key past it is refused. */
  readonly maxEntriesPerOwner?: number
  /** Most bytes of records (keys and stored answers) at once, over all owners. */
  readonly maxBytes?: number
  /** Most bytes one owner (a principal) may hold; a new key past it is refused. */
  readonly maxBytesPerOwner?: number
  readonly now?: () => number
}

/** What one record costs besides its key and its answer: the Map entry, the object, the fingerprint. */
const ENTRY_OVERHEAD = 256
const NO_OWNER = ''

/**
 * The embedded store: one process, bounded in records and in bytes, overall and per owner.
 *
 * It never drops a record before its lifetime ends, so a retry within the TTL always finds its
 * record and never runs a second time. When an owner's share or the store is full, a *new* key
 * is refused (`full`) instead, by the rule of `shares.ts` for records and for bytes alike: one
 * principal's traffic can use up its own share, never another's records, and a principal
 * holding nothing can still store its first records. A claim is charged its key and a fixed overhead; the answer is
 * charged when stored. The answer of a call that already ran is always stored, even past the
 * share (the owner's next new keys are then refused), so the store can exceed `maxBytes` by at
 * most the answers of the calls in flight.
 */
export class MemoryIdempotencyStore implements IdempotencyStore {
  readonly #entries = new Map<string, Entry>()
  readonly #owners = new Map<string, Holding>()
  readonly #maxEntries: number
  readonly #maxEntriesPerOwner: number
  readonly #maxBytes: number
  readonly #maxBytesPerOwner: number
  readonly #now: () => number
  #bytes = 0

  constructor (options: MemoryStoreOptions = {}) {
    this.#maxEntries = options.maxEntries ?? 100_000
    this.#maxEntriesPerOwner = Math.min(options.maxEntriesPerOwner ?? this.#maxEntries, this.#maxEntries)
    this.#maxBytes = options.maxBytes ?? 256 * 1024 * 1024
    this.#maxBytesPerOwner = Math.min(options.maxBytesPerOwner ?? this.#maxBytes, this.#maxBytes)
    this.#now = options.now ?? Date.now
  }

  get size (): number {
    return this.#entries.size
  }

  /** Bytes held in all, or by one owner. */
  bytes (owner?: string): number {
    return owner === undefined ? this.#bytes : this.#owners.get(owner)?.bytes ?? 0
  }

  /** Records held in all, or by one owner. */
  entries (owner?: string): number {
    return owner === undefined ? this.#entries.size : this.#owners.get(owner)?.entries ?? 0
  }

  async claim (key: string, fingerprint: string, ttlMs: number, owner: string = NO_OWNER): Promise<Claim> {
    const existing = this.#live(key)
    if (existing !== undefined) {
      return existing.result === undefined
        ? { state: 'running', fingerprint: existing.fingerprint }
        : { state: 'done', fingerprint: existing.fingerprint, result: existing.result }
    }
    this.#sweep()
    const bytes = ENTRY_OVERHEAD + key.length * 2
    const held = this.#owners.get(owner) ?? { bytes: 0, entries: 0 }
    const firstRecords = held.entries < FIRST_RECORDS
    const refusal = shareRefusal({ used: this.#entries.size, ownerUsed: held.entries, cost: 1, max: this.#maxEntries, perOwner: this.#maxEntriesPerOwner, firstRecords }) ??
      shareRefusal({ used: this.#bytes, ownerUsed: held.bytes, cost: bytes, max: this.#maxBytes, perOwner: this.#maxBytesPerOwner, firstRecords })
    if (refusal !== undefined) return { state: 'full', scope: refusal, retryAfterMs: this.#untilOldestExpires() }
    this.#put(key, { fingerprint, owner, result: undefined, expiresAt: this.#now() + ttlMs, bytes })
    return { state: 'claimed' }
  }

  async complete (key: string, fingerprint: string, result: StoredResult, ttlMs: number, owner: string = NO_OWNER): Promise<void> {
    this.#remove(key)
    this.#put(key, { fingerprint, owner, result, expiresAt: this.#now() + ttlMs, bytes: ENTRY_OVERHEAD + key.length * 2 + sizeOf(result) })
  }

  async release (key: string): Promise<void> {
    this.#remove(key)
  }

  #live (key: string): Entry | undefined {
    const entry = this.#entries.get(key)
    if (entry !== undefined && entry.expiresAt <= this.#now()) {
      this.#remove(key)
      return undefined
    }
    return entry
  }

  /**
   * Drop expired records from the front. Records are (re)inserted when claimed and when
   * completed, each with now + TTL, so with one TTL the front is always the soonest to expire
   * and the sweep stops at the first live record: no scan of the whole store per claim.
   */
  #sweep (): void {
    const now = this.#now()
    for (const [key, entry] of this.#entries) {
      if (entry.expiresAt > now) return
      this.#remove(key)
    }
  }

  #untilOldestExpires (): number {
    const first = this.#entries.values().next()
    return first.done === true ? 0 : Math.max(0, first.value.expiresAt - this.#now())
  }

  #put (key: string, entry: Entry): void {
    this.#entries.set(key, entry)
    this.#bytes += entry.bytes
    const held = this.#owners.get(entry.owner)
    if (held === undefined) this.#owners.set(entry.owner, { bytes: entry.bytes, entries: 1 })
    else { held.bytes += entry.bytes; held.entries++ }
  }

  #remove (key: string): void {
    const entry = this.#entries.get(key)
    if (entry === undefined) return
    this.#entries.delete(key)
    this.#bytes -= entry.bytes
    const held = this.#owners.get(entry.owner)!
    held.bytes -= entry.bytes
    if (--held.entries === 0) this.#owners.delete(entry.owner)
  }
}

/** Bytes of a stored answer as JSON (UTF-16 length: a bound close enough for a quota). */
function sizeOf (result: StoredResult): number {
  try {
    return (JSON.stringify(result)?.length ?? 0) * 2
  } catch {
    // A value JSON cannot carry never reached the caller either: charge it like a large answer.
    return 1024 * 1024
  }
}
