import fc from 'fast-check'
import type { Redis } from 'ioredis'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { MemoryLimitStore } from '../../src/core/limits/memory-store.js'
import type { Decision, LimitEntry } from '../../src/core/limits/store.js'
import { createRedisClient, whenReady } from '../../src/services/redis/client.js'
import { RedisLimitStore } from '../../src/services/redis/limit-store.js'
import { cleanPrefix, HAVE_REDIS, REDIS_URL, testPrefix } from './redis-env.js'

const prefix = testPrefix()
let client: Redis
beforeAll(async () => {
  if (!HAVE_REDIS) return
  client = createRedisClient(REDIS_URL)
  await whenReady(client, 2000)
})
afterAll(async () => {
  if (!HAVE_REDIS) return
  client.disconnect()
  await cleanPrefix(prefix)
})

const entry = (key: string, fields: Partial<LimitEntry>): LimitEntry => ({
  key, type: 'window', cost: 1, max: 1, endsAt: 0, intervalMs: 1, toleranceMs: 0, asks: false, force: false, ...fields,
})

/** A decision without what only the in-process store carries (`next`, `expiresAt`). */
function plain (decision: Decision): unknown {
  if (decision.type === 'crowded') return decision
  const states = decision.states.map(({ allowed, remaining, resetMs, retryAfterMs }) => ({ allowed, remaining, resetMs, retryAfterMs }))
  return { ...decision, states }
}

// Limits as the pipeline would make them: a window's key names the window (`fixed` ones never
// roll, so their ends pass while they are still asked about), a session limit counts per
// member and bounds the members in a group.
const limitArb = fc.record({
  kind: fc.constantFrom('window', 'fixed', 'rate'),
  max: fc.integer({ min: 1, max: 5 }),
  lengthMs: fc.integer({ min: 2, max: 32 }).map(n => n * 250),
  intervalMs: fc.integer({ min: 1, max: 20 }).map(n => n * 50),
  asks: fc.boolean(),
  groupMax: fc.option(fc.integer({ min: 1, max: 3 }), { nil: undefined }),
})
type Limit = typeof limitArb extends fc.Arbitrary<infer T> ? T : never

// Steps on the same grid as the limits' times, so that a time often falls exactly on an end.
const step = fc.nat(60).map(n => n * 50)
// Mostly calls that fit, some that never can (more than a window's max or a rate's burst).
const costArb = fc.oneof({ weight: 3, arbitrary: fc.nat(2) }, { weight: 1, arbitrary: fc.integer({ min: 3, max: 7 }) })
const opArb = fc.oneof(
  { weight: 4, arbitrary: fc.record({ op: fc.constant('decide' as const), limits: fc.uniqueArray(fc.nat(3), { minLength: 1, maxLength: 3 }), costs: fc.array(costArb, { minLength: 3, maxLength: 3 }), member: fc.nat(3), force: fc.boolean(), take: fc.constantFrom(true, true, true, false), stepMs: step }) },
  { weight: 1, arbitrary: fc.record({ op: fc.constant('refund' as const), stepMs: step }) },
)

function entryOf (limit: Limit, id: number, cost: number, member: number, force: boolean, now: number, base: number): LimitEntry {
  const who = limit.groupMax === undefined ? '' : `:s${member}`
  const group = limit.groupMax === undefined ? {} : { group: { key: `g${id}`, member: `s${member}`, max: limit.groupMax } }
  const common = { cost, asks: limit.asks, force, ...group }
  if (limit.kind === 'rate') return entry(`r${id}${who}`, { ...common, type: 'rate', intervalMs: limit.intervalMs, toleranceMs: limit.max * limit.intervalMs })
  if (limit.kind === 'fixed') return entry(`f${id}${who}`, { ...common, max: limit.max, endsAt: base + limit.lengthMs })
  const window = Math.floor(now / limit.lengthMs)
  return entry(`w${id}:${window}${who}`, { ...common, max: limit.max, endsAt: (window + 1) * limit.lengthMs })
}

describe.skipIf(!HAVE_REDIS)('the Redis limit store', () => {
  it('decides every sequence of calls and refunds as the in-process store does', async () => {
    let run = 0
    await fc.assert(fc.asyncProperty(fc.array(limitArb, { minLength: 4, maxLength: 4 }), fc.array(opArb, { minLength: 1, maxLength: 30 }), async (limits, ops) => {
      const memory = new MemoryLimitStore()
      const redis = new RedisLimitStore(client, `${prefix}eq${run++}:`)
      // Ahead of the real clock, so Redis never lets a key go before the callers' clock does;
      // up to 90 s on, past memory's sweep of ended counts and group members once a minute.
      const base = Math.ceil((Date.now() + 60_000) / 1000) * 1000
      let now = base
      let taken: LimitEntry[] = []
      for (const op of ops) {
        now += op.stepMs
        if (op.op === 'refund') {
          memory.refund(taken, now)
          await redis.refund(taken, now)
          continue
        }
        const entries = op.limits.map((id, i) => entryOf(limits[id]!, id, op.costs[i]!, op.member, op.force, now, base))
        const expected = memory.decide(entries, now, op.take)
        expect(plain(await redis.decide(entries, now, op.take))).toEqual(plain(expected))
        if (op.take && expected.type === 'taken') taken = entries
      }
    }), { numRuns: 60 })
  })

  it('takes an end that is now as past, and keeps a session in its group until its latest end, as memory does', async () => {
    const memory = new MemoryLimitStore()
    const redis = new RedisLimitStore(client, `${prefix}edge:`)
    const both = async (entries: LimitEntry[], now: number, take: boolean): Promise<Decision> => {
      const expected = memory.decide(entries, now, take)
      expect(plain(await redis.decide(entries, now, take))).toEqual(plain(expected))
      return expected
    }
    const base = Math.ceil((Date.now() + 60_000) / 1000) * 1000
    const session = (member: string, fields: Partial<LimitEntry>, group = 'g'): LimitEntry => entry(`c:${member}`, { max: 2, ...fields, group: { key: group, member, max: 1 } })
    expect((await both([session('a', { endsAt: base + 1000 })], base, true)).type).toBe('taken')
    // At its end the count is gone (one unit used would leave 0), though the member is still held.
    expect(await both([session('a', { endsAt: base + 1000 })], base + 1000, false)).toMatchObject({ type: 'taken', states: [{ remaining: 1 }] })
    expect((await both([session('b', { endsAt: base + 2000 })], base + 1000, true)).type).toBe('taken')
    expect((await both([session('a', { endsAt: base + 2000 })], base + 1000, false)).type).toBe('crowded')

    // A refund moves a rate's arrival time back, but the member keeps the later end it had.
    const rate = (cost: number): LimitEntry => session('c', { type: 'rate', cost, intervalMs: 250, toleranceMs: 1000 }, 'h')
    expect((await both([rate(2)], base, true)).type).toBe('taken')
    memory.refund([rate(2)], base)
    await redis.refund([rate(2)], base)
    expect((await both([rate(1)], base, true)).type).toBe('taken')
    const other = session('d', { type: 'rate', intervalMs: 250, toleranceMs: 1000 }, 'h')
    expect((await both([other], base + 250, true)).type).toBe('crowded')
  })

  it('takes exactly a window\'s max of 1000 concurrent calls from two replicas', async () => {
    const clients = [createRedisClient(REDIS_URL), createRedisClient(REDIS_URL)]
    await Promise.all(clients.map(c => whenReady(c, 2000)))
    const stores = clients.map(c => new RedisLimitStore(c, `${prefix}race:`))
    const now = Date.now()
    const window = [entry('window', { max: 100, endsAt: now + 60_000 })]
    const rate = [entry('rate', { type: 'rate', intervalMs: 1000, toleranceMs: 100 * 1000 })]
    for (const entries of [window, rate]) {
      const decisions = await Promise.all(Array.from({ length: 1000 }, (_, i) => stores[i % 2]!.decide(entries, now, true)))
      expect(decisions.filter(d => d.type === 'taken')).toHaveLength(100)
      expect(decisions.filter(d => d.type === 'refused')).toHaveLength(900)
    }
    expect(await client.get(`${prefix}race:window`)).toBe('100')
    expect(await client.get(`${prefix}race:rate`)).toBe(String(now + 100 * 1000))
    clients.forEach(c => c.disconnect())
  })

  it('lets a window\'s count go when it ends, a rate\'s at its arrival time and a group\'s with its last member, refunds keeping them', async () => {
    const store = new RedisLimitStore(client, `${prefix}ttl:`)
    const now = Date.now()
    const window = entry('w', { max: 10, endsAt: now + 5_000 })
    const rate = entry('r', { type: 'rate', cost: 2, intervalMs: 250, toleranceMs: 1000, group: { key: 'g', member: 's', max: 2 } })
    expect((await store.decide([window, rate], now, true)).type).toBe('taken')
    expect(await client.pexpiretime(`${prefix}ttl:w`)).toBe(now + 5_000)
    expect(await client.pttl(`${prefix}ttl:w`)).toBeGreaterThan(now + 5_000 - Date.now() - 100)
    expect(await client.get(`${prefix}ttl:r`)).toBe(String(now + 500))
    expect(await client.pexpiretime(`${prefix}ttl:r`)).toBe(now + 500)
    expect(await client.pexpiretime(`${prefix}ttl:g`)).toBe(now + 500)
    await store.refund([window, rate], now)
    expect(await client.get(`${prefix}ttl:w`)).toBe('0')
    expect(await client.pexpiretime(`${prefix}ttl:w`)).toBe(now + 5_000)
    expect(await client.get(`${prefix}ttl:r`)).toBe(String(now))
    expect(await client.pexpiretime(`${prefix}ttl:r`)).toBe(now + 500)
    await new Promise(resolve => setTimeout(resolve, 600))
    expect(await client.exists(`${prefix}ttl:r`, `${prefix}ttl:g`)).toBe(0)
  })

  it('answers a call that never fits with an Infinity retry, as memory does', async () => {
    const store = new RedisLimitStore(client, `${prefix}inf:`)
    const now = Date.now()
    const decision = await store.decide([entry('w', { cost: 3, max: 2, endsAt: now + 1_000 })], now, true)
    expect(decision).toEqual({ type: 'refused', index: 0, states: [{ allowed: false, remaining: 2, resetMs: 1_000, retryAfterMs: Infinity }] })
  })

  it('rejects when Redis cannot be reached, instead of deciding', async () => {
    const down = createRedisClient('redis://127.0.0.1:1')
    const store = new RedisLimitStore(down, prefix)
    await expect(store.decide([entry('w', { endsAt: Date.now() + 1_000 })], Date.now(), true)).rejects.toThrow()
    await expect(store.refund([entry('w', {})], Date.now())).rejects.toThrow()
    down.disconnect()
  })
})
