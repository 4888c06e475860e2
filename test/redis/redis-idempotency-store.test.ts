import { afterAll, describe, expect, it } from 'vitest'
import { RedisIdempotencyStore } from '../../src/services/redis/idempotency-store.js'
import { createRedisClient, whenReady } from '../../src/services/redis/client.js'
import { FIRST_RECORDS, reserveOf } from '../../src/core/idempotency/shares.js'
import { cleanPrefix, HAVE_REDIS, REDIS_URL, testPrefix } from './redis-env.js'

const prefix = testPrefix()
afterAll(async () => { if (HAVE_REDIS) await cleanPrefix(prefix) })

describe.skipIf(!HAVE_REDIS)('the Redis idempotency store', () => {
  it('of many concurrent claims of one key exactly one wins, from two clients', async () => {
    const clients = [createRedisClient(REDIS_URL), createRedisClient(REDIS_URL)]
    await Promise.all(clients.map(c => whenReady(c, 2000)))
    const stores = clients.map(c => new RedisIdempotencyStore(c, prefix))
    const claims = await Promise.all(Array.from({ length: 40 }, (_, i) => stores[i % 2]!.claim('race', 'f', 10_000)))
    expect(claims.filter(c => c.state === 'claimed')).toHaveLength(1)
    expect(claims.filter(c => c.state === 'running')).toHaveLength(39)
    clients.forEach(c => c.disconnect())
  })

  it('stores a result that every replica then sees, and frees released keys', async () => {
    const client = createRedisClient(REDIS_URL)
    await whenReady(client, 2000)
    const store = new RedisIdempotencyStore(client, prefix)
    expect(await store.claim('k', 'f', 10_000)).toEqual({ state: 'claimed' })
    await store.complete('k', 'f', { type: 'value', value: { ok: 1 } }, 10_000)
    expect(await store.claim('k', 'g', 10_000)).toEqual({ state: 'done', fingerprint: 'f', result: { type: 'value', value: { ok: 1 } } })
    expect(await store.claim('free', 'f', 10_000)).toEqual({ state: 'claimed' })
    await store.release('free')
    expect(await store.claim('free', 'f', 10_000)).toEqual({ state: 'claimed' })
    client.disconnect()
  })

  it('records expire after their TTL', async () => {
    const client = createRedisClient(REDIS_URL)
    await whenReady(client, 2000)
    const store = new RedisIdempotencyStore(client, prefix)
    await store.claim('short', 'f', 50)
    await new Promise(resolve => setTimeout(resolve, 120))
    expect(await store.claim('short', 'g', 50)).toEqual({ state: 'claimed' })
    client.disconnect()
  })

  it('shares its records between principals by the same rule as memory, across replicas, and a release gives a record back', async () => {
    const clients = [createRedisClient(REDIS_URL), createRedisClient(REDIS_URL)]
    await Promise.all(clients.map(c => whenReady(c, 2000)))
    const own = testPrefix()
    const [one, two] = clients.map(c => new RedisIdempotencyStore(c, own, { maxEntries: 160, maxEntriesPerOwner: 50 }))
    const fill = async (owner: string): Promise<number> => {
      let n = 0
      // Alternating replicas: the bound is the store's, not one replica's.
      while ((await (n % 2 === 0 ? one! : two!).claim(`${owner}|${n}`, 'f', 60_000, owner)).state === 'claimed') n++
      return n
    }
    expect([await fill('a'), await fill('b')]).toEqual([50, 50])
    expect(await one!.claim('a|more', 'f', 60_000, 'a')).toMatchObject({ state: 'full', scope: 'owner' })
    expect(await fill('c')).toBe(160 - reserveOf(160) - 100)
    expect(await fill('newcomer')).toBe(FIRST_RECORDS)
    expect(await one!.claim('newcomer|more', 'f', 60_000, 'newcomer')).toMatchObject({ state: 'full', scope: 'store' })
    await two!.release('newcomer|0', 'newcomer')
    expect(await one!.claim('newcomer|again', 'f', 60_000, 'newcomer')).toEqual({ state: 'claimed' })
    await two!.complete('newcomer|again', 'f', { type: 'value', value: 1 }, 60_000, 'newcomer')
    expect(await one!.claim('newcomer|again', 'f', 60_000, 'newcomer')).toMatchObject({ state: 'done' })
    await cleanPrefix(own)
    clients.forEach(c => c.disconnect())
  })

  it('an unreachable Redis rejects at once instead of queueing', async () => {
    const client = createRedisClient('redis://127.0.0.1:1')
    const store = new RedisIdempotencyStore(client, prefix)
    const started = performance.now()
    await expect(store.claim('k', 'f', 1000)).rejects.toThrow()
    expect(performance.now() - started).toBeLessThan(500)
    client.disconnect()
  })
})
