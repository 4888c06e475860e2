import { randomUUID } from 'node:crypto'
import { setTimeout as sleep } from 'node:timers/promises'
import type { FastifyInstance, LightMyRequestResponse } from 'fastify'
import { afterEach, describe, expect, it, vi } from 'vitest'
import { SLOW } from '../slow.js'
import { buildApp } from '../../plugins/app.js'
import { loadConfig } from '../../src/services/config.js'
import { httpTools, runs } from '../fixtures/http-tools.js'
import { API_KEYS, auth, KEYS, testApp } from '../http/helpers.js'
import { expectProblem } from '../http/problem-shape.js'
import { HAVE_REDIS_SERVER, PrivateRedis } from './private-redis.js'

/*
 * A Redis of the test's own, killed and restarted under a running gateway. Rate limiting is on
 * (a high limit), so its counters live in the same Redis: calls without a key prove the
 * limiter fails open while idempotent calls fail closed. Concurrency slots stay in process
 * here (CONCURRENCY_STORE=memory): with them in Redis every call needs Redis for its slot
 * (test/redis/slot-faults.test.ts), which would hide what this file checks.
 */

const servers: PrivateRedis[] = []
afterEach(async () => { await Promise.all(servers.splice(0).map(redis => redis.stop())) })

const uniquePrefix = (): string => `toolgate:outage:${randomUUID().slice(0, 8)}:`

async function gatewayOn (redis: PrivateRedis, rateLimitMax = 1_000): Promise<FastifyInstance> {
  return await testApp({ redisUrl: redis.url, redisPrefix: uniquePrefix(), rateLimitMax, concurrencyStore: 'memory' })
}

async function startedRedis (): Promise<PrivateRedis> {
  const redis = await PrivateRedis.start()
  servers.push(redis)
  return redis
}

const write = (app: FastifyInstance, key?: string, apiKey: string = KEYS.caller): Promise<LightMyRequestResponse> => app.inject({
  method: 'POST', url: '/tools/slow_write', payload: { ms: 0 },
  headers: { ...auth(apiKey), ...(key === undefined ? {} : { 'idempotency-key': key }) },
})

/** Call with `key` until the answer is not 503 (the client reconnects with a backoff of up to 2 s), bounded. */
async function untilRecovered (app: FastifyInstance, key: string, apiKey: string = KEYS.caller): Promise<LightMyRequestResponse> {
  const deadline = Date.now() + 8_000
  let response = await write(app, key, apiKey)
  while (response.statusCode === 503 && Date.now() < deadline) {
    await sleep(100)
    response = await write(app, key, apiKey)
  }
  return response
}

describe.skipIf(!HAVE_REDIS_SERVER)('Redis outage and recovery', { timeout: SLOW.REDIS_OUTAGE_MS }, () => {
  it('with Redis up, an idempotent call runs once and its repeat is replayed', async () => {
    const app = await gatewayOn(await startedRedis())
    const first = await write(app, 'up-1')
    const repeat = await write(app, 'up-1')
    expect(first.statusCode).toBe(200)
    expect(repeat.statusCode).toBe(200)
    expect(repeat.headers['idempotent-replayed']).toBe('true')
    expect(runs.get('slow_write')).toBe(1)
  })

  it('with Redis down, a call with an Idempotency-Key is 503 TOOLGATE_STORE_UNAVAILABLE with Retry-After, and its tool never runs', async () => {
    const redis = await startedRedis()
    const app = await gatewayOn(redis)
    expect((await write(app, 'warm')).statusCode).toBe(200)
    runs.clear()
    await redis.stop()
    const response = await write(app, 'during-outage')
    expectProblem(response, 503, 'TOOLGATE_STORE_UNAVAILABLE')
    expect(Number(response.headers['retry-after'])).toBeGreaterThan(0)
    expect(runs.get('slow_write')).toBeUndefined()
  })

  it('with Redis down, a call without an Idempotency-Key still gets 200 (the rate limiter fails open)', async () => {
    const redis = await startedRedis()
    const app = await gatewayOn(redis)
    expect((await write(app)).statusCode).toBe(200)
    await redis.stop()
    const response = await write(app)
    expect(response.statusCode, response.body).toBe(200)
    expect(response.json()).toEqual({ waited: 0 })
  })

  it('after Redis restarts on the same port, idempotent calls work again within seconds, with no gateway restart', async () => {
    const redis = await startedRedis()
    const app = await gatewayOn(redis)
    await redis.stop()
    expectProblem(await write(app, 'before-restart'), 503, 'TOOLGATE_STORE_UNAVAILABLE')
    await redis.start()
    const response = await untilRecovered(app, 'after-restart')
    expect(response.statusCode, response.body).toBe(200)
    const repeat = await write(app, 'after-restart')
    expect(repeat.headers['idempotent-replayed']).toBe('true')
    expect(runs.get('slow_write')).toBe(1)
  })

  it('a gateway started while Redis is down serves idempotent calls once Redis comes up', async () => {
    const redis = await PrivateRedis.reserve()
    servers.push(redis)
    const app = await gatewayOn(redis)
    expectProblem(await write(app, 'late-redis'), 503, 'TOOLGATE_STORE_UNAVAILABLE')
    await redis.start()
    const response = await untilRecovered(app, 'late-redis')
    expect(response.statusCode, response.body).toBe(200)
    expect(runs.get('slow_write')).toBe(1)
  })

  it('a call whose Redis goes away while it runs still answers its result, not a 503 that invites a retry', async () => {
    const redis = await startedRedis()
    const app = await gatewayOn(redis)
    const before = runs.get('slow_write') ?? 0
    const running = app.inject({ method: 'POST', url: '/tools/slow_write', payload: { ms: 800 }, headers: { ...auth(KEYS.caller), 'idempotency-key': 'mid-call' } })
    // Stop Redis once the tool runs (its idempotency claim is in Redis by then), however busy the machine.
    await vi.waitFor(() => { expect(runs.get('slow_write')).toBe(before + 1) }, { timeout: 5_000, interval: 5 })
    await redis.stop()
    const response = await running
    expect(response.statusCode, response.body).toBe(200)
    expect(response.json()).toEqual({ waited: 800 })
    expect(runs.get('slow_write')).toBe(before + 1)
  })

  it('after Redis restarts, the shared rate limit counts again, with no gateway restart', async () => {
    const redis = await startedRedis()
    const app = await gatewayOn(redis, 2)
    await redis.stop()
    await redis.start()
    // Another principal waits for the reconnection, so the caller's budget is untouched.
    expect((await untilRecovered(app, 'reconnected', KEYS.admin)).statusCode).toBe(200)
    expect([(await write(app)).statusCode, (await write(app)).statusCode]).toEqual([200, 200])
    expectProblem(await write(app), 429, 'TOOLGATE_RATE_LIMITED')
  })

  it('an outage leaves no "[ioredis] Unhandled error event" on stderr: the gateway handles its client\'s errors', async () => {
    const redis = await startedRedis()
    const app = await gatewayOn(redis)
    const consoleError = vi.spyOn(console, 'error').mockImplementation(() => {})
    try {
      await redis.stop()
      expectProblem(await write(app, 'noisy'), 503, 'TOOLGATE_STORE_UNAVAILABLE')
      await sleep(600) // a few reconnection attempts (100, 200, 300 ms apart)
      const unhandled = consoleError.mock.calls.filter(args => String(args[0]).includes('Unhandled error event'))
      expect(unhandled.map(args => args.join(' ').split('\n')[0])).toEqual([])
    } finally {
      consoleError.mockRestore()
    }
  })

  it('an outage shows in the gateway\'s own log at warn or above (docs/operations.md: the limiter "fails open (and logs)")', async () => {
    const redis = await startedRedis()
    const lines: Array<{ level: number, msg?: string }> = []
    const config = loadConfig({}, { apiKeys: API_KEYS, redisUrl: redis.url, redisPrefix: uniquePrefix(), rateLimitMax: 1_000, concurrencyStore: 'memory' })
    const app = await buildApp({ config, tools: httpTools, logger: { level: 'warn', stream: { write: (line: string) => { lines.push(JSON.parse(line) as { level: number }) } } } })
    try {
      await redis.stop()
      expect((await write(app)).statusCode).toBe(200)
      await sleep(300)
      expect(lines.filter(line => line.level >= 40).length, JSON.stringify(lines)).toBeGreaterThan(0)
    } finally {
      await app.close()
    }
  })
})
