import fc from 'fast-check'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { QueueFullError } from '../../src/core/scheduler.js'
import type { ConcurrencyClass } from '../../src/core/tool.js'
import { cleanPrefix, HAVE_REDIS, REDIS_URL, testPrefix } from './redis-env.js'
import { acquire, closeReplica, EXCLUSIVE, group, replica, SHARED, type Replica } from './slot-replicas.js'

/*
 * Random arrival sequences of mixed calls over three schedulers ("replicas") on one Redis.
 * What a test observes of a call (granted .. released) lies inside what Redis held for it, so an
 * overlap seen here is an overlap in Redis too. Fencing tokens come from one counter at grant
 * time in Redis, so they give Redis's own grant order, which must be the arrival order (shared
 * calls that join their replica's shared slot share its token, and are checked as overlaps only).
 */

const CLASSES: ConcurrencyClass[] = [SHARED, EXCLUSIVE, group('w', 2), group('v', 3)]
const callArb = fc.record({
  replica: fc.integer({ min: 0, max: 2 }),
  domain: fc.integer({ min: 0, max: 1 }),
  cls: fc.integer({ min: 0, max: CLASSES.length - 1 }),
  holdMs: fc.integer({ min: 0, max: 15 }),
})
const runArb = fc.record({ calls: fc.array(callArb, { minLength: 1, maxLength: 12 }), maxQueue: fc.integer({ min: 1, max: 12 }) })

const prefix = testPrefix()
let replicas: Replica[] = []
let run = 0
beforeAll(async () => { if (HAVE_REDIS) replicas = await Promise.all([0, 1, 2].map(() => replica(REDIS_URL, prefix))) })
afterAll(async () => {
  await Promise.all(replicas.map(closeReplica))
  if (HAVE_REDIS) await cleanPrefix(prefix)
})

interface Running { readonly cls: ConcurrencyClass }

/** Throws if `cls` may not start beside what runs (the concurrency rules, docs/declaration.md#concurrency). */
function checkAdmissible (cls: ConcurrencyClass, running: readonly Running[]): void {
  const all = [...running.map(r => r.cls), cls]
  if (all.some(c => c.type === 'exclusive')) expect(all).toHaveLength(1)
  const groups = all.filter(c => c.type === 'group')
  if (groups.length > 0) {
    expect(groups).toHaveLength(all.length)
    expect(new Set(groups.map(g => g.toolId)).size).toBe(1)
    expect(groups.length).toBeLessThanOrEqual(Math.min(...groups.map(g => g.limit)))
  }
}

describe.skipIf(!HAVE_REDIS)('Redis slots: properties over random arrivals on three replicas', () => {
  it('never breaks the rules, grants in arrival order per domain, and every call runs or is refused as queue-full', async () => {
    await fc.assert(fc.asyncProperty(runArb, async ({ calls, maxQueue }) => {
      run++
      const running = new Map<string, Running[]>()
      const tokens = new Map<string, Array<{ seq: number, token: number }>>()
      const outcomes: Array<Promise<'ran' | 'refused'>> = []
      for (const [seq, call] of calls.entries()) {
        const r = replicas[call.replica]!
        const domain = `run${run}:d${call.domain}`
        const cls = CLASSES[call.cls]!
        const { lease } = acquire(r, domain, cls, maxQueue)
        outcomes.push(lease.then(async granted => {
          const now = running.get(domain) ?? []
          checkAdmissible(cls, now)
          const me = { cls }
          running.set(domain, [...now, me])
          tokens.set(domain, [...(tokens.get(domain) ?? []), { seq, token: granted.fencingToken! }])
          await new Promise(resolve => setTimeout(resolve, call.holdMs))
          running.set(domain, running.get(domain)!.filter(x => x !== me))
          granted.release()
          return 'ran' as const
        }, (error: unknown) => {
          expect(error).toBeInstanceOf(QueueFullError)
          return 'refused' as const
        }))
        await r.redis.ping() // same connection, so Redis has seen this arrival before the next one
      }
      const settled = await Promise.all(outcomes)
      expect(settled.length).toBe(calls.length)
      // A call with a token of its own (not one it shares by joining its replica's shared slot)
      // was granted after every call that arrived before it: nothing earlier was overtaken.
      for (const granted of tokens.values()) {
        const byArrival = [...granted].sort((a, b) => a.seq - b.seq).map(g => g.token)
        for (const [j, token] of byArrival.entries()) {
          const earlier = byArrival.slice(0, j)
          if (!earlier.includes(token)) expect(earlier.filter(t => t > token)).toEqual([])
        }
      }
    }), { numRuns: 40 })
    // Idle shared slots linger for a third of a lease, then go at a renewal: nothing is left behind.
    await new Promise(resolve => setTimeout(resolve, 2_000))
    for (const r of replicas) expect(r.slots.domainCount).toBe(0)
  }, 120_000)
})
