import { afterAll, describe, expect, it } from 'vitest'
import { cleanPrefix, HAVE_REDIS, REDIS_URL, testPrefix } from '../redis/redis-env.js'
import { SLOW } from '../slow.js'
import { auth, KEYS, testApp } from './helpers.js'

const prefixes: string[] = []
afterAll(async () => { if (HAVE_REDIS) await Promise.all(prefixes.map(cleanPrefix)) })

const MAX_ENTRIES = 100

function store (kind: 'memory' | 'redis'): Record<string, unknown> {
  if (kind === 'memory') return {}
  const prefix = testPrefix()
  prefixes.push(prefix)
  return { redisUrl: REDIS_URL, redisPrefix: prefix, concurrencyStore: 'memory' }
}

const call = (key: string, idempotencyKey: string, ms = 0) => ({
  method: 'POST' as const, url: '/tools/slow_write', payload: { ms }, headers: { ...auth(key), 'idempotency-key': idempotencyKey },
})

describe.each(['memory', ...(HAVE_REDIS ? ['redis' as const] : [])] as const)('IDEMPOTENCY_MAX_ENTRIES is shared fairly (%s store)', kind => {
  it('one principal filling the store with keys leaves room for another, who still stores and replays', async () => {
    const app = await testApp({ idempotencyMaxEntries: MAX_ENTRIES, ...store(kind) })
    let stored = 0
    let refused
    for (let i = 0; i < MAX_ENTRIES * 2 && refused === undefined; i++) {
      const answer = await app.inject(call(KEYS.caller, `flood-${i}`))
      if (answer.statusCode === 200) stored++
      else refused = answer
    }
    expect(refused?.statusCode).toBe(429)
    expect(refused?.json()).toMatchObject({ code: 'TOOLGATE_IDEMPOTENCY_QUOTA' })
    expect(stored).toBeLessThan(MAX_ENTRIES)
    // The other principal holds nothing: its first records are stored, and a retry replays.
    for (let i = 0; i < 10; i++) {
      const first = await app.inject(call(KEYS.admin, `mine-${i}`, i))
      expect(first.statusCode).toBe(200)
      const retry = await app.inject(call(KEYS.admin, `mine-${i}`, i))
      expect(retry.statusCode).toBe(200)
      expect(retry.headers['idempotent-replayed']).toBe('true')
    }
  }, SLOW.CPU_MS)
})
