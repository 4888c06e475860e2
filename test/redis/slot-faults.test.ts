import { randomUUID } from 'node:crypto'
import { setTimeout as sleep } from 'node:timers/promises'
import type { FastifyInstance } from 'fastify'
import { afterEach, describe, expect, it } from 'vitest'
import { SLOW } from '../slow.js'
import { testApp } from '../http/helpers.js'
import { HAVE_REDIS_SERVER, PrivateRedis } from './private-redis.js'
import { call, slotTools, untilHeld } from './slot-http.js'
import { TcpProxy } from './tcp-proxy.js'

/*
 * The shared scheduler when Redis fails under it: a Redis of the test's own, stopped, paused
 * and cut off from one replica by a proxy. Calls that need a cross-replica slot fail fast with
 * 503 and Retry-After, nothing runs, and everything recovers without a restart.
 */

const cleanups: Array<() => Promise<void> | void> = []
afterEach(async () => { for (const cleanup of cleanups.splice(0).reverse()) await cleanup() })

async function privateRedis (): Promise<PrivateRedis> {
  const redis = await PrivateRedis.start()
  cleanups.push(async () => { await redis.stop() })
  return redis
}

const gateway = (redisUrl: string, slotLeaseMs = 5_000): Promise<FastifyInstance> =>
  testApp({ redisUrl, redisPrefix: `toolgate:faults:${randomUUID().slice(0, 8)}:`, slotLeaseMs }, slotTools)

/** Call until the answer is not 503, bounded: the client reconnects with a backoff of up to 2 s. */
async function untilRecovered (app: FastifyInstance, tool: string): Promise<Awaited<ReturnType<typeof call>>> {
  const deadline = Date.now() + 8_000
  let answer = await call(app, tool, 0)
  while (answer.status === 503 && Date.now() < deadline) {
    await sleep(100)
    answer = await call(app, tool, 0)
  }
  return answer
}

describe.skipIf(!HAVE_REDIS_SERVER)('shared slots when Redis fails', { timeout: SLOW.REDIS_OUTAGE_MS }, () => {
  it('Redis down: a call that needs a slot is 503 TOOLGATE_STORE_UNAVAILABLE with Retry-After, fast, and nothing runs; read-only calls too', async () => {
    const redis = await privateRedis()
    const app = await gateway(redis.url)
    expect((await call(app, 'slot_exclusive', 0)).status).toBe(200)
    await redis.stop()
    for (const tool of ['slot_exclusive', 'slot_read', 'slot_pair']) {
      const started = Date.now()
      const answer = await call(app, tool, 0)
      expect(answer.status, tool).toBe(503)
      expect(answer.code).toBe('TOOLGATE_STORE_UNAVAILABLE')
      expect(Number(answer.headers['retry-after'])).toBeGreaterThan(0)
      expect(answer.ran).toBeUndefined()
      expect(Date.now() - started).toBeLessThan(1_500)
    }
  })

  it('Redis down: read-only calls of a session whose shared slot is still valid keep running, then fail like the rest', async () => {
    const redis = await privateRedis()
    const app = await gateway(redis.url, 2_000)
    expect((await call(app, 'slot_read', 0)).status).toBe(200) // takes this replica's shared slot
    await redis.stop()
    const stoppedAt = Date.now()
    expect((await call(app, 'slot_read', 0)).status).toBe(200)
    expect((await call(app, 'slot_exclusive', 0)).status).toBe(503)
    // Never past 0.8 of the lease: by then Redis may have expired the slot and granted it elsewhere.
    await sleep(Math.max(0, stoppedAt + 1_700 - Date.now()))
    const late = await call(app, 'slot_read', 0)
    expect(late.status).toBe(503)
    expect(late.code).toBe('TOOLGATE_STORE_UNAVAILABLE')
  })

  it('fencing tokens keep growing across a Redis restart that lost every key', async () => {
    const redis = await privateRedis()
    const app = await gateway(redis.url)
    const before = await call(app, 'slot_exclusive', 0)
    await redis.stop()
    await redis.start()
    const after = await untilRecovered(app, 'slot_exclusive')
    expect(after.ran!.token!).toBeGreaterThan(before.ran!.token!)
  })

  it('Redis restarted: calls get slots again within seconds, with no gateway restart', async () => {
    const redis = await privateRedis()
    const app = await gateway(redis.url)
    await redis.stop()
    expect((await call(app, 'slot_exclusive', 0)).status).toBe(503)
    await redis.start()
    expect((await untilRecovered(app, 'slot_exclusive')).status).toBe(200)
    expect((await call(app, 'slot_read', 0)).status).toBe(200)
  })

  it('Redis paused (SIGSTOP): calls fail within the command timeout instead of hanging, and work again once it resumes', async () => {
    const redis = await privateRedis()
    const app = await gateway(redis.url)
    expect((await call(app, 'slot_exclusive', 0)).status).toBe(200)
    redis.pause()
    const started = Date.now()
    const answer = await call(app, 'slot_exclusive', 0)
    expect(answer.status).toBe(503)
    expect(answer.code).toBe('TOOLGATE_STORE_UNAVAILABLE')
    expect(Date.now() - started).toBeLessThan(2_500)
    redis.resume()
    expect((await untilRecovered(app, 'slot_exclusive')).status).toBe(200)
  })

  it('a replica cut off from Redis: its new calls are 503, the other replica gets the slot it held once the lease ends (with a larger token), and it recovers when healed', async () => {
    const redis = await privateRedis()
    const proxy = await TcpProxy.start(redis.port)
    cleanups.push(() => proxy.close())
    const prefix = `toolgate:partition:${randomUUID().slice(0, 8)}:`
    const config = { redisPrefix: prefix, slotLeaseMs: 1_000 }
    const cut = await testApp({ ...config, redisUrl: proxy.url }, slotTools)
    const healthy = await testApp({ ...config, redisUrl: redis.url }, slotTools)
    const holding = call(cut, 'slot_exclusive', 4_000)
    await untilHeld(redis.url, prefix, 'caller') // the cut replica holds the slot before the cut
    proxy.block()
    const taken = await call(healthy, 'slot_exclusive', 0)
    expect(taken.status, taken.code).toBe(200)
    const refused = await call(cut, 'slot_exclusive', 0)
    expect(refused.status).toBe(503)
    const held = await holding
    expect(held.status).toBe(200) // the cut-off call itself ran to its end...
    // ...but the healthy replica began while it still ran: freed by the lease (1 s), not by the
    // 4 s call ending. Both ran in this process, so their clocks compare, however slow the machine.
    expect(taken.ran!.start).toBeLessThan(held.ran!.end)
    expect(taken.ran!.token!).toBeGreaterThan(held.ran!.token!) // ...and a fenced system would reject its late writes
    proxy.unblock()
    expect((await untilRecovered(cut, 'slot_exclusive')).status).toBe(200)
  })
})
