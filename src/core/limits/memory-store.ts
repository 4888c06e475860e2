import { GatewayError } from '../errors.js'
import { evaluate, refunded, verdictOf, type Decision, type EntryState, type LimitEntry, type LimitStore } from './store.js'

/*
 * The counts of one process. Synchronous, so a decision is atomic by construction. Bounded: a
 * count is forgotten when its window ends (or its rate is back to whole), and past `maxKeys`
 * live counts a new one is refused (503) rather than an old one forgotten, which would hand
 * its principal a fresh allowance. A principal's sessions under a session limit are bounded
 * by the limit's group, so no principal fills the table for the others by opening sessions.
 */

const SWEEP_MS = 60_000

interface Kept {
  value: number
  expiresAt: number
}

export class MemoryLimitStore implements LimitStore {
  readonly #counts = new Map<string, Kept>()
  readonly #groups = new Map<string, Map<string, number>>()
  readonly #maxKeys: number
  #sweptAt = 0
  /** No count ends before this (the earliest end since the last sweep). */
  #endsFirst = Infinity

  constructor (options: { readonly maxKeys?: number } = {}) {
    this.#maxKeys = options.maxKeys ?? 1_000_000
  }

  /** Live counts (for tests and the bound). */
  get size (): number {
    return this.#counts.size
  }

  decide (entries: readonly LimitEntry[], now: number, take: boolean): Decision {
    for (let i = 0; i < entries.length; i++) {
      const group = entries[i]!.group
      if (group !== undefined && this.#crowded(group, now)) return { type: 'crowded', index: i }
    }
    const kept: Array<Kept | undefined> = []
    const states: Array<EntryState & { next: number, expiresAt: number }> = []
    for (const entry of entries) {
      const count = this.#live(entry.key, now)
      kept.push(count)
      states.push(evaluate(entry, count?.value, now))
    }
    const decision = verdictOf(entries, states)
    if (!take || decision.type !== 'taken') return decision
    this.#room(entries, kept, now)
    for (let i = 0; i < entries.length; i++) {
      const entry = entries[i]!
      if (entry.cost === 0) continue
      const state = states[i]!
      const count = kept[i]
      // A count already kept (live: no sweep removed it) is changed in place: no Map write.
      if (count !== undefined) {
        count.value = state.next
        count.expiresAt = state.expiresAt
      } else {
        this.#counts.set(entry.key, { value: state.next, expiresAt: state.expiresAt })
      }
      this.#endsFirst = Math.min(this.#endsFirst, state.expiresAt)
      if (entry.group !== undefined) this.#join(entry.group, state.expiresAt)
    }
    return decision
  }

  refund (entries: readonly LimitEntry[], now: number): void {
    for (const entry of entries) {
      const kept = this.#counts.get(entry.key)
      if (kept === undefined || kept.expiresAt <= now) continue
      kept.value = refunded(entry, kept.value)
    }
  }

  #live (key: string, now: number): Kept | undefined {
    const kept = this.#counts.get(key)
    if (kept === undefined) return undefined
    if (kept.expiresAt > now) return kept
    this.#counts.delete(key)
    return undefined
  }

  #crowded (group: NonNullable<LimitEntry['group']>, now: number): boolean {
    const members = this.#groups.get(group.key)
    if (members === undefined || members.has(group.member)) return false
    for (const [member, until] of members) if (until <= now) members.delete(member)
    return members.size >= group.max
  }

  #join (group: NonNullable<LimitEntry['group']>, until: number): void {
    let members = this.#groups.get(group.key)
    if (members === undefined) {
      members = new Map()
      this.#groups.set(group.key, members)
    }
    members.set(group.member, Math.max(until, members.get(group.member) ?? 0))
  }

  /** Room for the keys this call adds (`kept`: what each entry found): sweep what ended, then refuse if the table is still full. */
  #room (entries: readonly LimitEntry[], kept: ReadonlyArray<Kept | undefined>, now: number): void {
    let adding = 0
    for (let i = 0; i < entries.length; i++) if (entries[i]!.cost > 0 && kept[i] === undefined) adding++
    // Once a minute anyway, so that what ended does not wait for a full table to be let go; when
    // full, only once a count has ended since: a sweep reads every count, and a full table of
    // live ones must not pay that per call.
    const full = this.#counts.size + adding > this.#maxKeys
    if (full ? this.#endsFirst <= now : now - this.#sweptAt >= SWEEP_MS) this.#sweep(now)
    if (this.#counts.size + adding > this.#maxKeys) {
      throw new GatewayError('TOOLGATE_STORE_UNAVAILABLE', 'the limits\' counts fill their table', { retryAfter: 1 })
    }
  }

  #sweep (now: number): void {
    this.#sweptAt = now
    this.#endsFirst = Infinity
    for (const [key, kept] of this.#counts) {
      if (kept.expiresAt <= now) this.#counts.delete(key)
      else this.#endsFirst = Math.min(this.#endsFirst, kept.expiresAt)
    }
    for (const [key, members] of this.#groups) {
      for (const [member, until] of members) if (until <= now) members.delete(member)
      if (members.size === 0) this.#groups.delete(key)
    }
  }
}
