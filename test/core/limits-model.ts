import fc from 'fast-check'
import type { MemoryLimitStore } from '../../src/core/limits/memory-store.js'
import type { LimitEntry } from '../../src/core/limits/store.js'
/** The calendar windows a limit may name (written here again: the model does not borrow the code's list). */
export const CALENDAR_WINDOWS = ['minute', 'hour', 'day', 'week', 'month'] as const
export type CalendarWindow = typeof CALENDAR_WINDOWS[number]

/**
 * Reference models for the limits (src/core/limits), written another way than the code they
 * check: calendar windows cut from the ISO text of an instant, a rate as a token bucket in
 * exact integers, a fixed window as a ledger of what each window took.
 */

const MINUTE = 60_000
const HOUR = 60 * MINUTE
const DAY = 24 * HOUR
const WEEK = 7 * DAY
/** 1970-01-05, the first Monday of the epoch. */
const FIRST_MONDAY = 4 * DAY

const FIRST_INSTANT = Date.UTC(1971, 0, 1)
const LAST_INSTANT = Date.UTC(2101, 0, 1) - 1

/** Where the calendar window `name` holding `now` starts and ends, from the instant's ISO text. */
export function modelCalendarBounds (name: CalendarWindow, now: number): { start: number, end: number } {
  const iso = new Date(now).toISOString()
  const at = (text: string): number => Date.parse(text)
  switch (name) {
    case 'minute': return { start: at(`${iso.slice(0, 16)}:00.000Z`), end: at(`${iso.slice(0, 16)}:00.000Z`) + MINUTE }
    case 'hour': return { start: at(`${iso.slice(0, 13)}:00:00.000Z`), end: at(`${iso.slice(0, 13)}:00:00.000Z`) + HOUR }
    case 'day': return { start: at(`${iso.slice(0, 10)}T00:00:00.000Z`), end: at(`${iso.slice(0, 10)}T00:00:00.000Z`) + DAY }
    case 'week': {
      const start = FIRST_MONDAY + Math.floor((now - FIRST_MONDAY) / WEEK) * WEEK
      return { start, end: start + WEEK }
    }
    case 'month': {
      const year = Number(iso.slice(0, 4))
      const month = Number(iso.slice(5, 7))
      const next = month === 12 ? `${year + 1}-01` : `${year}-${String(month + 1).padStart(2, '0')}`
      return { start: at(`${iso.slice(0, 7)}-01T00:00:00.000Z`), end: at(`${next}-01T00:00:00.000Z`) }
    }
  }
}

/** An instant from 1971 to 2100: anywhere, or within 2 ms of a whole minute (the edges of every calendar window). */
export const instantArb: fc.Arbitrary<number> = fc.oneof(
  fc.integer({ min: FIRST_INSTANT, max: LAST_INSTANT }),
  fc.record({
    year: fc.integer({ min: 1971, max: 2100 }), month: fc.nat(11), day: fc.integer({ min: 1, max: 31 }),
    hour: fc.nat(23), minute: fc.nat(59), delta: fc.integer({ min: -2, max: 2 }),
  }).map(({ year, month, day, hour, minute, delta }) => Math.min(LAST_INSTANT, Math.max(FIRST_INSTANT, Date.UTC(year, month, day, hour, minute) + delta))),
)

/**
 * A rate as a token bucket, in exact integers: time in ticks of 1/calls ms, so that one call's
 * worth (periodMs/calls ms) is `periodMs` ticks whatever `calls` is. It holds at most `burst`
 * calls' worth, refills one tick per tick, and goes into debt when a call is forced past it.
 */
export class TokenBucket {
  readonly #calls: bigint
  readonly #perCall: bigint
  readonly #burst: number
  readonly #capacity: bigint
  #level: bigint
  #at: number

  constructor (rate: { readonly calls: number, readonly periodMs: number, readonly burst: number }, now: number) {
    this.#calls = BigInt(rate.calls)
    this.#perCall = BigInt(rate.periodMs)
    this.#burst = rate.burst
    this.#capacity = BigInt(rate.burst) * this.#perCall
    this.#level = this.#capacity
    this.#at = now
  }

  advanceTo (now: number): void {
    const refilled = this.#level + BigInt(now - this.#at) * this.#calls
    this.#level = refilled < this.#capacity ? refilled : this.#capacity
    this.#at = now
  }

  canTake (cost: number): boolean {
    return this.#level >= BigInt(cost) * this.#perCall
  }

  take (cost: number): void {
    this.#level -= BigInt(cost) * this.#perCall
  }

  refund (cost: number): void {
    const back = this.#level + BigInt(cost) * this.#perCall
    this.#level = back < this.#capacity ? back : this.#capacity
  }

  /** Whole calls it holds now. */
  get tokens (): number {
    return this.#level <= 0n ? 0 : Number(this.#level / this.#perCall)
  }

  /** Milliseconds until it is full again. */
  get msUntilFull (): number {
    return Number(this.#capacity - this.#level) / Number(this.#calls)
  }

  /** Milliseconds until it holds `cost` calls (Infinity when it never can). */
  msUntil (cost: number): number {
    if (cost > this.#burst) return Infinity
    const missing = BigInt(cost) * this.#perCall - this.#level
    return missing <= 0n ? 0 : Number(missing) / Number(this.#calls)
  }
}

const NO_RATE = { intervalMs: 0, toleranceMs: 0 }
const NO_WINDOW = { max: 0, endsAt: 0 }
const PLAIN = { asks: false, force: false }

/** A fixed window's entry as the pipeline builds it: its key names the window's start. */
export function windowEntry (name: string, bounds: { start: number, end: number }, cost: number, max: number, more: Partial<LimitEntry> = {}): LimitEntry {
  return { key: `${name}|${bounds.start}`, type: 'window', cost, max, endsAt: bounds.end, ...NO_RATE, ...PLAIN, ...more }
}

/** A rate's entry: one call adds `intervalMs`, and `burst` of them may come at once. */
export function rateEntry (key: string, cost: number, intervalMs: number, burst: number, more: Partial<LimitEntry> = {}): LimitEntry {
  return { key, type: 'rate', cost, intervalMs, toleranceMs: burst * intervalMs, ...NO_WINDOW, ...PLAIN, ...more }
}

const PROBE_MAX = 2 ** 40

/**
 * What the store keeps under `key`, read through a decision that takes nothing: a window's
 * units used, or how far a rate's arrival time is ahead of `now`.
 */
export function storedOf (store: MemoryLimitStore, type: LimitEntry['type'], key: string, now: number): number {
  const probe: LimitEntry = type === 'window'
    ? { key, type, cost: 0, max: PROBE_MAX, endsAt: now + 1, ...NO_RATE, ...PLAIN }
    : { key, type, cost: 0, intervalMs: 1, toleranceMs: PROBE_MAX, ...NO_WINDOW, ...PLAIN }
  const decision = store.decide([probe], now, false)
  if (decision.type !== 'taken') throw new Error(`a probe of ${key} was not taken: ${decision.type}`)
  const state = decision.states[0]!
  return type === 'window' ? PROBE_MAX - state.remaining : state.resetMs
}

/** The steps of a sequence: how far the clock moves (or 'retry': by the last refusal's retryAfterMs, 'early': 1 ms less). */
export type Advance = number | 'retry' | 'early'

/** Advances on the scale of `unitMs`: mostly a fraction of it, sometimes none, a few units, or a retry. */
export function advanceArb (unitMs: number): fc.Arbitrary<Advance> {
  return fc.oneof(
    { weight: 6, arbitrary: fc.nat(1000).map(n => Math.floor(unitMs * n / 4000)) },
    { weight: 2, arbitrary: fc.constant(0) },
    { weight: 1, arbitrary: fc.nat(3000).map(n => Math.floor(unitMs * n / 1000)) },
    { weight: 1, arbitrary: fc.constant('retry' as const) },
    { weight: 1, arbitrary: fc.constant('early' as const) },
  )
}

/** The clock's step for `advance`, given the last refusal's retryAfterMs (undefined when the last call was not refused). */
export function stepOf (advance: Advance, retryAfterMs: number | undefined): number {
  if (typeof advance === 'number') return advance
  if (retryAfterMs === undefined || !Number.isFinite(retryAfterMs)) return 0
  return advance === 'retry' ? retryAfterMs : retryAfterMs - 1
}

/** One limit of a call under several: a window (`max` units per `windowMs`) or a rate (`max` calls of burst). */
export interface Spec { readonly type: LimitEntry['type'], readonly max: number, readonly windowMs: number, readonly intervalMs: number, readonly asks: boolean }

/** The limits of one call under several, as the model counts them: a ledger per window, a bucket per rate. */
export class Counts {
  readonly #used: Array<Map<number, number>>
  readonly #buckets: TokenBucket[]

  constructor (readonly specs: readonly Spec[], now: number) {
    this.#used = specs.map(() => new Map())
    this.#buckets = specs.map(spec => new TokenBucket({ calls: 1, periodMs: spec.intervalMs, burst: spec.max }, now))
  }

  bounds (i: number, now: number): { start: number, end: number } {
    const ms = this.specs[i]!.windowMs
    return { start: now - now % ms, end: now - now % ms + ms }
  }

  entries (costs: readonly number[], now: number, force: boolean): LimitEntry[] {
    return this.specs.map(({ type, max, intervalMs, asks }, i) => type === 'window'
      ? windowEntry(`w${i}`, this.bounds(i, now), costs[i]!, max, { asks, force })
      : rateEntry(`r${i}`, costs[i]!, intervalMs, max, { asks, force }))
  }

  /** What each limit keeps now: a window's units used, a rate's arrival time ahead of now. */
  kept (now: number): number[] {
    return this.specs.map((spec, i) => {
      if (spec.type === 'window') return this.#used[i]!.get(this.bounds(i, now).start) ?? 0
      this.#buckets[i]!.advanceTo(now)
      return this.#buckets[i]!.msUntilFull
    })
  }

  fits (i: number, cost: number, now: number): boolean {
    const spec = this.specs[i]!
    if (spec.type === 'window') return (this.#used[i]!.get(this.bounds(i, now).start) ?? 0) + cost <= spec.max
    this.#buckets[i]!.advanceTo(now)
    return this.#buckets[i]!.canTake(cost)
  }

  retryAfter (i: number, cost: number, now: number): number {
    const spec = this.specs[i]!
    if (spec.type === 'rate') return this.#buckets[i]!.msUntil(cost)
    return cost > spec.max ? Infinity : this.bounds(i, now).end - now
  }

  /** Charge (or with `sign` -1, give back) each limit its cost. */
  charge (costs: readonly number[], now: number, sign: 1 | -1): void {
    this.specs.forEach((spec, i) => {
      const cost = costs[i]!
      if (spec.type === 'rate') return sign === 1 ? this.#buckets[i]!.take(cost) : this.#buckets[i]!.refund(cost)
      const { start } = this.bounds(i, now)
      this.#used[i]!.set(start, Math.max(0, (this.#used[i]!.get(start) ?? 0) + sign * cost))
    })
  }
}

/** The decision the rules give (refuse beats ask; the refusal named is the one that frees last). */
export function modelDecision (counts: Counts, costs: readonly number[], now: number, force: boolean): { type: string, index?: number, indexes?: number[] } {
  const over = counts.specs.map((_, i) => i).filter(i => !counts.fits(i, costs[i]!, now))
  const refusing = over.filter(i => !counts.specs[i]!.asks)
  if (refusing.length > 0) {
    const last = Math.max(...refusing.map(i => counts.retryAfter(i, costs[i]!, now)))
    return { type: 'refused', index: refusing.find(i => counts.retryAfter(i, costs[i]!, now) === last)! }
  }
  const asking = force ? [] : over
  return asking.length > 0 ? { type: 'ask', indexes: asking } : { type: 'taken' }
}

/** What the store keeps for each of the limits of `counts`, now. */
export function keptIn (store: MemoryLimitStore, counts: Counts, now: number): number[] {
  return counts.entries([0, 0, 0, 0], now, false).map(entry => storedOf(store, entry.type, entry.key, now))
}
