import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import { GatewayError } from '../../src/core/errors.js'
import { MemoryLimitStore } from '../../src/core/limits/memory-store.js'
import type { Decision, LimitEntry } from '../../src/core/limits/store.js'
import { durationMs, fixedWindowOf } from '../../src/core/limits/windows.js'
import { SLOW } from '../slow.js'
import {
  advanceArb, CALENDAR_WINDOWS, Counts, instantArb, keptIn, modelCalendarBounds, modelDecision, rateEntry, stepOf, storedOf, TokenBucket, windowEntry, type Advance, type CalendarWindow, type Spec,
} from './limits-model.js'

// Each property takes well under a second here; SLOW.CPU_MS only ends one that hangs.
const RUNS = { numRuns: 300 }
const SEQUENCE_RUNS = { numRuns: 200 }
const SECOND = 1_000
const DAY = 86_400_000
const UNITS = { ms: 1, s: SECOND, m: 60 * SECOND, h: 3_600 * SECOND, d: DAY } as const
/** Nothing these tests do reaches it. */
const UNBOUNDED = 1_000_000_000

/** Is `t` where a calendar window starts, by the Date getters (not by the arithmetic under test)? */
function startsCalendarWindow (name: CalendarWindow, t: number): boolean {
  const d = new Date(t)
  const zeros = [d.getUTCMilliseconds(), d.getUTCSeconds(), name === 'minute' ? 0 : d.getUTCMinutes(), ['minute', 'hour'].includes(name) ? 0 : d.getUTCHours()]
  return zeros.every(zero => zero === 0) && (name !== 'week' || d.getUTCDay() === 1) && (name !== 'month' || d.getUTCDate() === 1)
}

const LENGTH: Record<CalendarWindow, [number, number]> = {
  minute: [60 * SECOND, 60 * SECOND], hour: [3_600 * SECOND, 3_600 * SECOND], day: [DAY, DAY], week: [7 * DAY, 7 * DAY], month: [28 * DAY, 31 * DAY],
}

/** A valid duration's text and its milliseconds, counted here rather than by `durationMs`. */
const durationArb = fc.constantFrom(...(Object.keys(UNITS) as Array<keyof typeof UNITS>)).chain(unit => {
  const min = Math.ceil(SECOND / UNITS[unit])
  const max = Math.min(999_999_999, Math.floor(366 * DAY / UNITS[unit]))
  return fc.integer({ min, max }).map(n => ({ text: `${n}${unit}`, ms: n * UNITS[unit] }))
})

describe('fixed windows, for instants from 1971 to 2100', { timeout: SLOW.CPU_MS }, () => {
  it('a calendar window holds the instant, starts and ends on its boundaries, and the next one starts where it ends', () => {
    fc.assert(fc.property(instantArb, fc.constantFrom(...CALENDAR_WINDOWS), (now, name) => {
      const fixed = fixedWindowOf(name)!
      const { start, end } = fixed.bounds(now)
      expect(start <= now && now < end).toBe(true)
      expect(startsCalendarWindow(name, start) && startsCalendarWindow(name, end)).toBe(true)
      expect(end - start).toBeGreaterThanOrEqual(LENGTH[name][0])
      expect(end - start).toBeLessThanOrEqual(LENGTH[name][1])
      expect({ start, end }).toEqual(modelCalendarBounds(name, now))
      expect(fixed.bounds(end).start).toBe(end)
      expect(fixed.bounds(start - 1).end).toBe(start)
      expect(fixed.bounds(end - 1)).toEqual({ start, end })
    }), { numRuns: 2_000 })
  })

  it('a duration window holds the instant, is a whole number of durations from the epoch, and the next one starts where it ends', () => {
    fc.assert(fc.property(instantArb, durationArb, (now, { text, ms }) => {
      const fixed = fixedWindowOf(text)!
      const { start, end } = fixed.bounds(now)
      expect(start <= now && now < end).toBe(true)
      expect(start % ms).toBe(0)
      expect(end - start).toBe(ms)
      expect(fixed.bounds(end).start).toBe(end)
    }), { numRuns: 1_000 })
  })

  it('a duration is a whole number and a unit, from 1 s to 366 d, and nothing else', () => {
    const anyDuration = fc.record({ n: fc.integer({ min: 1, max: 999_999_999 }), unit: fc.constantFrom(...(Object.keys(UNITS) as Array<keyof typeof UNITS>)) })
    fc.assert(fc.property(anyDuration, ({ n, unit }) => {
      const ms = n * UNITS[unit]
      expect(durationMs(`${n}${unit}`)).toBe(ms >= SECOND && ms <= 366 * DAY ? ms : undefined)
    }), { numRuns: 1_000 })
  })
})

/** The windows of the budget property and their (longest) length, by the model rather than `durationMs`. */
const BUDGET_WINDOWS = {
  'minute': 60 * SECOND, 'hour': 3_600 * SECOND, 'day': DAY, 'week': 7 * DAY, 'month': 31 * DAY,
  '15s': 15 * SECOND, '90s': 90 * SECOND, '7m': 420 * SECOND, '6h': 6 * 3_600 * SECOND,
} as const
type BudgetWindow = keyof typeof BUDGET_WINDOWS

function modelBounds (window: BudgetWindow, now: number): { start: number, end: number } {
  if ((CALENDAR_WINDOWS as readonly string[]).includes(window)) return modelCalendarBounds(window as CalendarWindow, now)
  const ms = BUDGET_WINDOWS[window]
  return { start: now - now % ms, end: now - now % ms + ms }
}

const takeArb = fc.oneof({ weight: 4, arbitrary: fc.constant(true) }, { weight: 1, arbitrary: fc.constant(false) })

const budgetArb = fc.constantFrom(...(Object.keys(BUDGET_WINDOWS) as BudgetWindow[])).chain(window => fc.record({
  window: fc.constant(window),
  max: fc.integer({ min: 1, max: 20 }),
  start: instantArb,
  steps: fc.array(fc.record({ advance: advanceArb(BUDGET_WINDOWS[window]), cost: fc.nat(24), take: takeArb }), { maxLength: 80, size: 'max' }),
}))

/** Does this step wait what the last refusal said (or 1 ms less), to repeat the refused call? */
function retried (advance: Advance, refusal: { readonly retryAfterMs: number } | undefined): boolean {
  return typeof advance !== 'number' && refusal !== undefined && Number.isFinite(refusal.retryAfterMs)
}

describe('a quota or budget over a fixed window', { timeout: SLOW.CPU_MS }, () => {
  it('takes a call exactly when what its window took plus the cost fits, and says when it will', () => {
    fc.assert(fc.property(budgetArb, ({ window, max, start, steps }) => {
      const store = new MemoryLimitStore()
      const fixed = fixedWindowOf(window)!
      const used = new Map<number, number>()
      const takenByStore = new Map<number, number>()
      let now = start
      let refusal: { retryAfterMs: number, cost: number } | undefined
      for (const step of steps) {
        now += stepOf(step.advance, refusal?.retryAfterMs)
        const retry = retried(step.advance, refusal)
        const cost = retry ? refusal!.cost : step.cost
        const bounds = modelBounds(window, now)
        const before = used.get(bounds.start) ?? 0
        const fits = before + cost <= max
        const decision = store.decide([windowEntry('budget', fixed.bounds(now), cost, max)], now, step.take)
        expect(decision.type).toBe(fits ? 'taken' : 'refused')
        const state = (decision as Exclude<Decision, { type: 'crowded' }>).states[0]!
        expect(state).toMatchObject({
          allowed: fits, remaining: max - before - (fits ? cost : 0), resetMs: bounds.end - now,
          retryAfterMs: fits ? 0 : cost > max ? Infinity : bounds.end - now,
        })
        // Waiting what a refusal said lets the same call in (a new window); a millisecond less does not.
        if (retry) expect(decision.type).toBe(step.advance === 'retry' ? 'taken' : 'refused')
        if (fits && step.take) used.set(bounds.start, before + cost)
        // Whatever the model says, what the store took in a window stays within it.
        if (decision.type === 'taken' && step.take) {
          takenByStore.set(bounds.start, (takenByStore.get(bounds.start) ?? 0) + cost)
          expect(takenByStore.get(bounds.start)).toBeLessThanOrEqual(max)
        }
        refusal = fits ? undefined : { retryAfterMs: state.retryAfterMs, cost }
      }
    }), SEQUENCE_RUNS)
  })
})

const rateArb = fc.record({
  intervalMs: fc.integer({ min: 1, max: 1_000 }),
  calls: fc.integer({ min: 1, max: 60 }),
  burst: fc.integer({ min: 1, max: 12 }),
  start: instantArb,
}).chain(rate => fc.record({
  rate: fc.constant(rate),
  steps: fc.array(fc.record({
    advance: advanceArb(2 * rate.intervalMs),
    cost: fc.oneof({ weight: 6, arbitrary: fc.constant(1) }, { weight: 1, arbitrary: fc.integer({ min: 2, max: 3 }) }),
    take: takeArb,
  }), { maxLength: 100, size: 'max' }),
}))

describe('a rate (GCRA), against a token bucket of `burst` calls refilled at calls/period', { timeout: SLOW.CPU_MS }, () => {
  it('takes a call exactly when the bucket holds its cost, and reports what the bucket holds and lacks', () => {
    fc.assert(fc.property(rateArb, ({ rate: { intervalMs, calls, burst, start }, steps }) => {
      const store = new MemoryLimitStore()
      const bucket = new TokenBucket({ calls, periodMs: calls * intervalMs, burst }, start)
      let now = start
      let refusal: { retryAfterMs: number, cost: number } | undefined
      for (const step of steps) {
        now += stepOf(step.advance, refusal?.retryAfterMs)
        const retry = retried(step.advance, refusal)
        const cost = retry ? refusal!.cost : step.cost
        bucket.advanceTo(now)
        const fits = bucket.canTake(cost)
        const retryAfterMs = bucket.msUntil(cost)
        const decision = store.decide([rateEntry('rate', cost, intervalMs, burst)], now, step.take)
        expect(decision.type).toBe(fits ? 'taken' : 'refused')
        // The state describes the call as taken when it fits, whether or not it is.
        if (fits) bucket.take(cost)
        const state = (decision as Exclude<Decision, { type: 'crowded' }>).states[0]!
        expect(state).toMatchObject({ allowed: fits, remaining: bucket.tokens, resetMs: bucket.msUntilFull, retryAfterMs })
        if (fits && !step.take) bucket.refund(cost)
        // Waiting what a refusal said lets the same call in; a millisecond less does not.
        if (retry) expect(decision.type).toBe(step.advance === 'retry' ? 'taken' : 'refused')
        refusal = fits ? undefined : { retryAfterMs: state.retryAfterMs, cost }
      }
    }), SEQUENCE_RUNS)
  })

  it('takes at most burst + T/interval calls in any span of T ms, and a full burst at one instant', () => {
    fc.assert(fc.property(rateArb, ({ rate: { intervalMs, burst, start }, steps }) => {
      const store = new MemoryLimitStore()
      const entry = (cost: number): LimitEntry => rateEntry('rate', cost, intervalMs, burst)
      let now = start
      const taken: Array<{ at: number, cost: number }> = []
      for (const { advance, cost } of steps) {
        now += typeof advance === 'number' ? advance : 0
        if (store.decide([entry(cost)], now, true).type === 'taken') taken.push({ at: now, cost })
      }
      for (let i = 0; i < taken.length; i++) {
        let units = 0
        for (let j = i; j < taken.length; j++) {
          units += taken[j]!.cost
          expect(units * intervalMs).toBeLessThanOrEqual(burst * intervalMs + taken[j]!.at - taken[i]!.at)
        }
      }
      // Once the bucket is full again, exactly `burst` calls come at once.
      now += burst * intervalMs
      let burstTaken = 0
      while (burstTaken <= burst && store.decide([entry(1)], now, true).type === 'taken') burstTaken++
      expect(burstTaken).toBe(burst)
    }), SEQUENCE_RUNS)
  })

  // A declared rate rarely divides its window evenly (3 calls a second: 333.33... ms a call);
  // `Limits` counts it in whole milliseconds, so that arrival times near 1.8e12 stay exact.
  it('takes a full burst at one instant from a fresh count, whatever calls and window are declared', () => {
    const declared = fc.record({
      calls: fc.integer({ min: 1, max: 1_000 }),
      window: fc.constantFrom('1s', '10s', '1m', '1h', '1d'),
      burst: fc.integer({ min: 1, max: 50 }),
      now: instantArb,
    })
    fc.assert(fc.property(declared, ({ calls, window, burst, now }) => {
      const store = new MemoryLimitStore()
      // As `Limits` builds it (its own test: test/core/limits-pipeline.test.ts).
      const entry = rateEntry('rate', 1, Math.max(1, Math.round(durationMs(window)! / calls)), burst)
      let taken = 0
      while (taken <= burst && store.decide([entry], now, true).type === 'taken') taken++
      expect(taken).toBe(burst)
    }), RUNS)
  })
})

const specArb: fc.Arbitrary<Spec> = fc.record({
  type: fc.constantFrom('window' as const, 'rate' as const),
  max: fc.integer({ min: 1, max: 6 }),
  windowMs: fc.constantFrom(10 * SECOND, 20 * SECOND, 60 * SECOND),
  intervalMs: fc.integer({ min: 1, max: 2_000 }),
  asks: fc.boolean(),
})

const severalArb = fc.record({
  specs: fc.array(specArb, { minLength: 2, maxLength: 4 }),
  start: instantArb,
  steps: fc.array(fc.record({
    advance: advanceArb(8 * SECOND),
    costs: fc.array(fc.nat(3), { minLength: 4, maxLength: 4 }),
    take: takeArb,
    force: fc.boolean(),
    refund: fc.boolean(),
  }), { maxLength: 60, size: 'max' }),
})

describe('one decision over several limits', { timeout: SLOW.CPU_MS }, () => {
  it('is all or nothing: a call not taken changes no count, a taken one charges each limit its cost once, and a refund gives it back', () => {
    fc.assert(fc.property(severalArb, ({ specs, start, steps }) => {
      const store = new MemoryLimitStore()
      const counts = new Counts(specs, start)
      let now = start
      let refusal: { retryAfterMs: number, costs: readonly number[] } | undefined
      for (const step of steps) {
        now += stepOf(step.advance, refusal?.retryAfterMs)
        const retry = retried(step.advance, refusal)
        const costs = retry ? refusal!.costs : step.costs
        const expected = modelDecision(counts, costs, now, step.force)
        const before = keptIn(store, counts, now)
        const entries = counts.entries(costs, now, step.force)
        const decision = store.decide(entries, now, step.take)
        expect(decision).toMatchObject(expected)
        // Waiting what the refusal said frees every refusing limit; a millisecond less does not.
        if (retry) expect(decision.type === 'refused').toBe(step.advance === 'early')
        const takes = decision.type === 'taken' && step.take
        if (takes) counts.charge(costs, now, 1)
        const after = keptIn(store, counts, now)
        if (!takes) expect(after).toEqual(before)
        expect(after).toEqual(counts.kept(now))
        if (takes && step.refund) {
          store.refund(entries, now)
          counts.charge(costs, now, -1)
          expect(keptIn(store, counts, now)).toEqual(before)
        }
        refusal = decision.type === 'refused' ? { retryAfterMs: decision.states[decision.index]!.retryAfterMs, costs } : undefined
      }
    }), SEQUENCE_RUNS)
  })
})

const SWEEP_MS = 60 * SECOND
const KEY_WINDOW_MS = 20 * SECOND
const KEY_INTERVAL_MS = 3 * SECOND

const boundedArb = fc.record({
  maxKeys: fc.integer({ min: 1, max: 5 }),
  start: instantArb,
  steps: fc.array(fc.record({
    advance: fc.oneof({ weight: 3, arbitrary: fc.nat(5 * SECOND) }, { weight: 1, arbitrary: fc.nat(2 * SWEEP_MS) }),
    keys: fc.uniqueArray(fc.nat(7), { minLength: 1, maxLength: 3 }),
    cost: fc.nat(2),
  }), { maxLength: 60, size: 'max' }),
})

describe('the bound on the in-process store', { timeout: SLOW.CPU_MS }, () => {
  it('never holds more than maxKeys counts, refuses a new one (503) exactly when live ones fill it, and then changes nothing', () => {
    fc.assert(fc.property(boundedArb, ({ maxKeys, start, steps }) => {
      const store = new MemoryLimitStore({ maxKeys })
      // Even keys are windows, odd ones rates; the model knows when each count ends.
      const until = new Map<string, number>()
      const buckets = new Map<string, TokenBucket>()
      let now = start
      for (const step of steps) {
        now += step.advance
        const window = { start: now - now % KEY_WINDOW_MS, end: now - now % KEY_WINDOW_MS + KEY_WINDOW_MS }
        const entries = step.keys.map(k => k % 2 === 0 ? windowEntry(`w${k}`, window, step.cost, UNBOUNDED) : rateEntry(`r${k}`, step.cost, KEY_INTERVAL_MS, UNBOUNDED))
        const live = [...until].filter(([, end]) => end > now).map(([key]) => key)
        const adding = entries.filter(entry => entry.cost > 0 && !live.includes(entry.key)).length
        const kept = (): number[] => live.map(key => storedOf(store, key.includes('|') ? 'window' : 'rate', key, now))
        const before = kept()
        let refused: unknown
        try {
          expect(store.decide(entries, now, true).type).toBe('taken')
        } catch (error) {
          refused = error
        }
        if (live.length + adding > maxKeys) {
          expect(refused).toBeInstanceOf(GatewayError)
          expect((refused as GatewayError).code).toBe('TOOLGATE_STORE_UNAVAILABLE')
          expect(kept()).toEqual(before)
        } else {
          expect(refused).toBeUndefined()
          for (const entry of entries.filter(entry => entry.cost > 0)) {
            if (entry.type === 'window') { until.set(entry.key, window.end); continue }
            const bucket = buckets.get(entry.key) ?? new TokenBucket({ calls: 1, periodMs: KEY_INTERVAL_MS, burst: UNBOUNDED }, now)
            buckets.set(entry.key, bucket)
            bucket.advanceTo(now)
            bucket.take(entry.cost)
            until.set(entry.key, now + bucket.msUntilFull)
          }
          // What ended is let go within a minute of a take.
          expect(store.size).toBeLessThanOrEqual([...until.values()].filter(end => end > now - SWEEP_MS).length)
        }
        expect(store.size).toBeLessThanOrEqual(maxKeys)
      }
    }), SEQUENCE_RUNS)
  })

  const sessionsArb = fc.record({
    max: fc.integer({ min: 1, max: 3 }),
    start: instantArb,
    steps: fc.array(fc.record({ advance: advanceArb(KEY_WINDOW_MS), principal: fc.nat(1), session: fc.nat(4), take: takeArb }), { maxLength: 60, size: 'max' }),
  })

  it('holds at most `max` live sessions of a principal: a new one past them is crowded and charges nothing, a member passes', () => {
    fc.assert(fc.property(sessionsArb, ({ max, start, steps }) => {
      const store = new MemoryLimitStore()
      const members = [new Map<number, number>(), new Map<number, number>()]
      const used = new Map<string, number>()
      let now = start
      for (const { advance, principal, session, take } of steps) {
        now += typeof advance === 'number' ? advance : 0
        const window = { start: now - now % KEY_WINDOW_MS, end: now - now % KEY_WINDOW_MS + KEY_WINDOW_MS }
        const group = { key: `p${principal}`, member: `s${session}`, max }
        const entries = [windowEntry(`p${principal}`, window, 1, UNBOUNDED), windowEntry(`p${principal}.s${session}`, window, 1, UNBOUNDED, { group })]
        const sessions = members[principal]!
        const liveSessions = [...sessions].filter(([, end]) => end > now).map(([s]) => s)
        const crowded = !liveSessions.includes(session) && liveSessions.length >= max
        const decision = store.decide(entries, now, take)
        expect(decision).toMatchObject(crowded ? { type: 'crowded', index: 1 } : { type: 'taken' })
        if (!crowded && take) {
          sessions.set(session, Math.max(sessions.get(session) ?? 0, window.end))
          used.set(entries[0]!.key, (used.get(entries[0]!.key) ?? 0) + 1)
        }
        expect([...sessions.values()].filter(end => end > now).length).toBeLessThanOrEqual(max)
        expect(storedOf(store, 'window', entries[0]!.key, now)).toBe(used.get(entries[0]!.key) ?? 0)
      }
    }), SEQUENCE_RUNS)
  })
})
