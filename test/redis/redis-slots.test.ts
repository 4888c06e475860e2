import { Redis } from 'ioredis'
import { afterEach, describe, expect, it } from 'vitest'
import { QueueFullError } from '../../src/core/scheduler.js'
import { cleanPrefix, HAVE_REDIS, REDIS_URL, testPrefix } from './redis-env.js'
import { acquire, closeReplica, EXCLUSIVE, group, replica, settlesWithin, SHARED, until, type Replica } from './slot-replicas.js'

/* Several schedulers ("replicas") on one Redis: the concurrency rules (docs/declaration.md#concurrency) hold across them. */

const opened: Replica[] = []
const prefixes: string[] = []
afterEach(async () => {
  await Promise.all(opened.splice(0).map(closeReplica))
  await Promise.all(prefixes.splice(0).map(cleanPrefix))
})

async function replicas (n: number, options?: Parameters<typeof replica>[2]): Promise<Replica[]> {
  const prefix = testPrefix()
  prefixes.push(prefix)
  const made = await Promise.all(Array.from({ length: n }, () => replica(REDIS_URL, prefix, options)))
  opened.push(...made)
  return made
}

describe.skipIf(!HAVE_REDIS)('Redis slots across replicas', () => {
  it('an exclusive call on one replica keeps an exclusive call on another waiting until it releases', async () => {
    const [a, b] = await replicas(2) as [Replica, Replica]
    const first = await acquire(a, 's1', EXCLUSIVE).lease
    const second = acquire(b, 's1', EXCLUSIVE).lease
    expect(await settlesWithin(second, 300)).toBe(false)
    first.release()
    const granted = await second
    expect(granted.fencingToken).toBeGreaterThan(first.fencingToken!)
    granted.release()
  })

  it('shared calls on two replicas run together; an exclusive call waits for both', async () => {
    const [a, b] = await replicas(2) as [Replica, Replica]
    const [s1, s2] = await Promise.all([acquire(a, 's1', SHARED).lease, acquire(b, 's1', SHARED).lease])
    const x = acquire(a, 's1', EXCLUSIVE).lease
    s1.release()
    expect(await settlesWithin(x, 300)).toBe(false)
    s2.release()
    ;(await x).release()
  })

  it('a selfConcurrency group of 2 never runs 3 at once over three replicas', async () => {
    const rs = await replicas(3)
    const w = group('write', 2)
    const leases = await Promise.all([acquire(rs[0]!, 's1', w).lease, acquire(rs[1]!, 's1', w).lease])
    const third = acquire(rs[2]!, 's1', w).lease
    expect(await settlesWithin(third, 300)).toBe(false)
    leases[0]!.release()
    ;(await third).release()
    leases[1]!.release()
  })

  it('waiters are admitted in arrival order, whatever replica they wait on', async () => {
    const [a, b, c] = await replicas(3) as [Replica, Replica, Replica]
    const holder = await acquire(a, 's1', EXCLUSIVE).lease
    const order: string[] = []
    const waits = []
    for (const [name, r, cls] of [['b-x', b, EXCLUSIVE], ['c-shared', c, SHARED], ['a-x', a, EXCLUSIVE]] as const) {
      waits.push(acquire(r, 's1', cls).lease.then(lease => { order.push(name); return lease }))
      // Arrival order is the order Redis saw them: a ping on the same connection answers only
      // after Redis ran the request sent before it, however slow the machine.
      await r.redis.ping()
    }
    holder.release()
    for (const wait of waits) (await wait).release()
    expect(order).toEqual(['b-x', 'c-shared', 'a-x'])
  })

  it('a full queue is refused with QueueFullError, counted over all replicas', async () => {
    const [a, b] = await replicas(2) as [Replica, Replica]
    const holder = await acquire(a, 's1', EXCLUSIVE).lease
    const queued = acquire(a, 's1', EXCLUSIVE, 1)
    await expect(acquire(b, 's1', EXCLUSIVE, 1).lease).rejects.toBeInstanceOf(QueueFullError)
    holder.release()
    ;(await queued.lease).release()
  })

  it('shared calls waiting behind one replica\'s shared-slot request are bounded by the queue limit too', async () => {
    const [a, b] = await replicas(2, { maxQueue: 2 }) as [Replica, Replica]
    const holder = await acquire(b, 's1', EXCLUSIVE).lease
    const first = acquire(a, 's1', SHARED).lease
    await a.redis.ping() // Redis has queued the replica's request for a shared slot
    await new Promise(resolve => setTimeout(resolve, 20))
    const more = [0, 1, 2, 3].map(() => acquire(a, 's1', SHARED).lease.then(lease => lease, (error: unknown) => error))
    holder.release()
    const [granted, ...rest] = await Promise.all([first, ...more])
    const refused = rest.filter(x => x instanceof QueueFullError)
    expect(refused).toHaveLength(3)
    granted!.release()
    for (const x of rest) if (!(x instanceof QueueFullError)) (x as { release: () => void }).release()
  })

  it('a cancelled waiter leaves the queue, and those behind it move up', async () => {
    const [a, b] = await replicas(2) as [Replica, Replica]
    const holder = await acquire(a, 's1', EXCLUSIVE).lease
    const cancelled = acquire(b, 's1', EXCLUSIVE)
    const behind = acquire(a, 's1', SHARED).lease
    await new Promise(resolve => setTimeout(resolve, 100))
    cancelled.cancel()
    holder.release()
    ;(await behind).release()
  })

  it('a stream of shared calls on one replica, always one in flight, does not starve an exclusive call on another', async () => {
    const [a, b] = await replicas(2) as [Replica, Replica]
    let exclusiveAt: number | undefined
    let stop = false
    let streamed = 0
    const sharedAfter: number[] = []
    const stream = (async () => {
      // Overlapping shared calls: each starts before the previous one ends, so the replica's
      // shared slot would never fall idle on its own. It runs until told to stop (or 10 s).
      let previous = await acquire(a, 's1', SHARED).lease
      const cap = Date.now() + 10_000
      while (!stop && Date.now() < cap) {
        const next = acquire(a, 's1', SHARED).lease
        await new Promise(resolve => setTimeout(resolve, 5))
        previous.release()
        previous = await next
        streamed++
        if (exclusiveAt !== undefined) sharedAfter.push(Date.now())
      }
      previous.release()
      return stop
    })()
    await until(() => streamed >= 5) // the stream is going
    const exclusive = await acquire(b, 's1', EXCLUSIVE).lease
    exclusiveAt = Date.now()
    await new Promise(resolve => setTimeout(resolve, 100))
    expect(sharedAfter).toEqual([]) // the stream waits behind it meanwhile
    exclusive.release()
    stop = true
    // Granted while the stream still ran, not once it gave up: it was stopped, not capped.
    expect(await stream).toBe(true)
  })

  it('domains are independent', async () => {
    const [a, b] = await replicas(2) as [Replica, Replica]
    const one = await acquire(a, 's1', EXCLUSIVE).lease
    const other = await acquire(b, 's2', EXCLUSIVE).lease
    one.release()
    other.release()
  })

  it('a replica that stops renewing (cut off from Redis) loses its slot after the lease; the waiter gets a larger fencing token', async () => {
    const [a, b] = await replicas(2, { leaseMs: 1_000, pollMs: 100 }) as [Replica, Replica]
    const held = await acquire(a, 's1', EXCLUSIVE).lease
    a.redis.disconnect() // no renewals, no release: what a dead replica leaves behind
    const started = Date.now()
    const next = await acquire(b, 's1', EXCLUSIVE).lease
    const waited = Date.now() - started
    expect(waited).toBeGreaterThan(500)
    expect(waited).toBeLessThan(1_000 + 1_500)
    expect(next.fencingToken).toBeGreaterThan(held.fencingToken!)
    next.release()
  })

  it('a dead replica\'s slot in a session nobody calls again leaves nothing in Redis after three leases', async () => {
    const [a] = await replicas(1, { leaseMs: 1_000, pollMs: 100 }) as [Replica]
    await acquire(a, 'forgotten', EXCLUSIVE).lease
    a.redis.disconnect()
    const probe = new Redis(REDIS_URL)
    try {
      const keys = (): Promise<string[]> => probe.keys(`${prefixes.at(-1)!}{forgotten}:*`)
      expect((await keys()).length).toBeGreaterThan(0)
      await new Promise(resolve => setTimeout(resolve, 3_300))
      expect(await keys()).toEqual([])
    } finally {
      probe.disconnect()
    }
  })

  it('a call that runs longer than the lease keeps its slot: it is renewed while held', async () => {
    const [a, b] = await replicas(2, { leaseMs: 1_000, pollMs: 100 }) as [Replica, Replica]
    const held = await acquire(a, 's1', EXCLUSIVE).lease
    const waiting = acquire(b, 's1', EXCLUSIVE).lease
    expect(await settlesWithin(waiting, 2_500)).toBe(false)
    held.release()
    ;(await waiting).release()
    expect(a.lost).toEqual([])
  })

  it('closing a replica refuses its waiters with 503 and frees what it held', async () => {
    const [a, b] = await replicas(2) as [Replica, Replica]
    const held = await acquire(a, 's1', EXCLUSIVE).lease
    const waiter = acquire(a, 's1', EXCLUSIVE).lease
    const other = acquire(b, 's1', EXCLUSIVE).lease
    await new Promise(resolve => setTimeout(resolve, 100))
    const closing = a.slots.close()
    await expect(waiter).rejects.toMatchObject({ code: 'TOOLGATE_UNAVAILABLE' })
    await closing
    ;(await other).release()
    held.release() // after close: harmless
  })
})
