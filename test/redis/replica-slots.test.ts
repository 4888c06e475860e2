import type { FastifyInstance } from 'fastify'
import { afterAll, describe, expect, it } from 'vitest'
import { testApp } from '../http/helpers.js'
import { violations } from './intervals.js'
import { cleanPrefix, HAVE_REDIS, REDIS_URL, testPrefix } from './redis-env.js'
import { call, slotTools, untilHeld as untilHeldIn } from './slot-http.js'
import { until } from './slot-replicas.js'

/* Two gateways on one Redis, one session: the concurrency rules (docs/declaration.md#concurrency) hold over both, through HTTP. */

const prefixes: string[] = []
afterAll(async () => { await Promise.all(prefixes.map(cleanPrefix)) })

async function twoReplicas (overrides: Parameters<typeof testApp>[0] = {}): Promise<[FastifyInstance, FastifyInstance]> {
  const redisPrefix = testPrefix()
  prefixes.push(redisPrefix)
  const config = { redisUrl: REDIS_URL, redisPrefix, ...overrides }
  return await Promise.all([testApp(config, slotTools), testApp(config, slotTools)]) as [FastifyInstance, FastifyInstance]
}

/** Until Redis shows a holder of the session's slot (the call that holds it has been granted). */
const untilHeld = (session = 'one-session'): Promise<void> => untilHeldIn(REDIS_URL, prefixes.at(-1)!, 'caller', session)

describe.skipIf(!HAVE_REDIS)('two gateways on one Redis: one session acts as one', () => {
  it('calls of a tool that is not concurrency-safe, sent alternately to both, never overlap, and carry increasing fencing tokens', async () => {
    const [a, b] = await twoReplicas()
    const answers = await Promise.all(Array.from({ length: 12 }, (_, i) => call(i % 2 === 0 ? a : b, 'slot_exclusive', 20)))
    expect(answers.map(x => x.status)).toEqual(Array(12).fill(200))
    const ran = answers.map(x => x.ran!)
    expect(violations(ran)).toEqual([])
    const tokens = [...ran].sort((x, y) => x.start - y.start).map(x => x.token!)
    expect(tokens.every(t => Number.isInteger(t))).toBe(true)
    expect(tokens).toEqual([...tokens].sort((x, y) => x - y))
  })

  it('a selfConcurrency: 2 tool runs at most two at a time over both (not four)', async () => {
    const [a, b] = await twoReplicas()
    const answers = await Promise.all(Array.from({ length: 8 }, (_, i) => call(i % 2 === 0 ? a : b, 'slot_pair', 60)))
    const ran = answers.map(x => x.ran!)
    expect(violations(ran)).toEqual([])
    const overlapping = ran.filter(x => ran.some(y => y !== x && x.start < y.end && y.start < x.end))
    expect(overlapping.length).toBeGreaterThan(0) // two at a time do run together
  })

  it('read-only concurrency-safe calls on both replicas run beside each other', async () => {
    const [a, b] = await twoReplicas()
    const [x, y] = await Promise.all([call(a, 'slot_read', 300), call(b, 'slot_read', 300)])
    expect(x.ran!.start < y.ran!.end && y.ran!.start < x.ran!.end).toBe(true)
  })

  it('other sessions are not held up by a busy one', async () => {
    const [a, b] = await twoReplicas()
    const busy = call(a, 'slot_exclusive', 500, 'busy')
    await new Promise(resolve => setTimeout(resolve, 50))
    const other = await call(b, 'slot_exclusive', 0, 'free')
    expect(other.status).toBe(200)
    expect(other.ran!.start).toBeLessThan((await busy).ran!.end)
  })

  it('per-tool limits hold across replicas and sessions', async () => {
    const [a, b] = await twoReplicas({ toolLimits: { slot_read: { maxInFlight: 1, maxQueue: 16 } } })
    const answers = await Promise.all(Array.from({ length: 6 }, (_, i) => call(i % 2 === 0 ? a : b, 'slot_read', 20, `s${i}`)))
    const ran = answers.map(x => ({ ...x.ran!, tool: 'slot_exclusive' })) // a limit of 1: as if each ran alone
    expect(violations(ran)).toEqual([])
  })

  it('the bounded queue is shared: one call more than MAX_QUEUE_PER_SESSION, on either replica, is 429 with Retry-After', async () => {
    const [a, b] = await twoReplicas({ maxQueuePerSession: 1 })
    const running = call(a, 'slot_exclusive', 1_000)
    await untilHeld()
    const queued = call(b, 'slot_exclusive', 0)
    await until(() => b.catalog.scheduler.queued === 1) // Redis has queued it
    const refused = await call(a, 'slot_exclusive', 0)
    expect(refused.status).toBe(429)
    expect(refused.code).toBe('TOOLGATE_QUEUE_FULL')
    expect(Number(refused.headers['retry-after'])).toBeGreaterThan(0)
    expect([(await running).status, (await queued).status]).toEqual([200, 200])
  })

  it('a wait past QUEUE_TIMEOUT_MS for another replica\'s slot is 503 with Retry-After', async () => {
    const [a, b] = await twoReplicas({ queueTimeoutMs: 150 })
    const running = call(a, 'slot_exclusive', 600)
    await untilHeld()
    const waited = await call(b, 'slot_exclusive', 0)
    expect(waited.status).toBe(503)
    expect(waited.code).toBe('TOOLGATE_QUEUE_TIMEOUT')
    expect(Number(waited.headers['retry-after'])).toBeGreaterThan(0)
    expect((await running).status).toBe(200)
  })

  it('shutting one replica down releases the calls waiting there for the other\'s slot', async () => {
    const [a, b] = await twoReplicas()
    const running = call(a, 'slot_exclusive', 3_000)
    await untilHeld()
    const waiting = call(b, 'slot_exclusive', 0)
    await until(() => b.catalog.scheduler.queued === 1)
    let runningEnded = false
    void running.then(() => { runningEnded = true })
    await b.close()
    const released = await waiting
    // Released by the close, not by the other replica's 3 s call ending, however slow the machine.
    expect(runningEnded).toBe(false)
    expect(released.status).toBe(503)
    expect((await running).status).toBe(200)
  })
})

describe('without REDIS_URL', () => {
  it('a tool sees no fencing token: nothing changes in process', async () => {
    const app = await testApp({}, slotTools)
    expect((await call(app, 'slot_exclusive', 0)).ran!.token).toBeNull()
  })
})
