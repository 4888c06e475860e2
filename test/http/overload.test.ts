import { setTimeout as sleep } from 'node:timers/promises'
import type { FastifyInstance, LightMyRequestResponse } from 'fastify'
import { describe, expect, it } from 'vitest'
import { ConfigError } from '../../src/services/config.js'
import { runs } from '../fixtures/http-tools.js'
import { auth, KEYS, testApp } from './helpers.js'
import { expectProblem } from './problem-shape.js'

const call = (app: FastifyInstance, tool: string, payload: object, apiKey: string = KEYS.admin, session?: string): Promise<LightMyRequestResponse> =>
  app.inject({ method: 'POST', url: `/tools/${tool}`, payload, headers: { ...auth(apiKey), ...(session === undefined ? {} : { 'x-session-id': session }) } })

describe('per-tool limits on calls in flight and queued', () => {
  it('one in flight and one queued: a third concurrent call, from yet another session, is 429 TOOLGATE_QUEUE_FULL with Retry-After and never runs', async () => {
    const app = await testApp({ toolLimits: { slow_write: { maxInFlight: 1, maxQueue: 1 } } })
    const first = call(app, 'slow_write', { ms: 300 }, KEYS.admin, 's1')
    await sleep(30)
    const second = call(app, 'slow_write', { ms: 0 }, KEYS.admin, 's2')
    await sleep(30)
    const third = await call(app, 'slow_write', { ms: 0 }, KEYS.admin, 's3')
    expectProblem(third, 429, 'TOOLGATE_QUEUE_FULL')
    expect(Number(third.headers['retry-after'])).toBeGreaterThan(0)
    expect([(await first).statusCode, (await second).statusCode]).toEqual([200, 200])
    expect(runs.get('slow_write')).toBe(2)
  })

  it('a toolLimits entry naming an unknown tool stops buildApp with a ConfigError naming toolLimits.<id>', async () => {
    const building = testApp({ toolLimits: { no_such_tool: { maxInFlight: 1 } } })
    await expect(building).rejects.toThrow(ConfigError)
    await expect(building).rejects.toThrow(/toolLimits\.no_such_tool/)
  })
})

describe('rate limits per principal', () => {
  it('the 4th call of a principal within the window is 429 TOOLGATE_RATE_LIMITED, problem+json with RateLimit-* and Retry-After', async () => {
    const app = await testApp({ rateLimitMax: 3 })
    for (let i = 0; i < 3; i++) expect((await call(app, 'echo', { text: 'hi' })).statusCode).toBe(200)
    const fourth = await call(app, 'echo', { text: 'hi' })
    expectProblem(fourth, 429, 'TOOLGATE_RATE_LIMITED')
    expect(fourth.headers['ratelimit-limit']).toBe('3')
    expect(fourth.headers['ratelimit-remaining']).toBe('0')
    expect(Number(fourth.headers['ratelimit-reset'])).toBeGreaterThan(0)
    expect(Number(fourth.headers['retry-after'])).toBeGreaterThan(0)
  })

  it('successful calls carry RateLimit-Remaining counting down', async () => {
    const app = await testApp({ rateLimitMax: 3 })
    const remaining: unknown[] = []
    for (let i = 0; i < 3; i++) remaining.push((await call(app, 'echo', { text: 'hi' })).headers['ratelimit-remaining'])
    expect(remaining).toEqual(['2', '1', '0'])
  })

  it('a principal who used up the limit does not limit another principal', async () => {
    const app = await testApp({ rateLimitMax: 3 })
    for (let i = 0; i < 4; i++) await call(app, 'echo', { text: 'hi' }, KEYS.admin)
    expectProblem(await call(app, 'echo', { text: 'hi' }, KEYS.admin), 429, 'TOOLGATE_RATE_LIMITED')
    expect((await call(app, 'echo', { text: 'hi' }, KEYS.caller)).statusCode).toBe(200)
  })

  it('a tool\'s own rateLimitMax refuses the call past it with 429 TOOLGATE_RATE_LIMITED', async () => {
    const app = await testApp({ toolLimits: { echo: { rateLimitMax: 2 } } })
    expect((await call(app, 'echo', { text: 'a' })).statusCode).toBe(200)
    expect((await call(app, 'echo', { text: 'b' })).statusCode).toBe(200)
    const third = await call(app, 'echo', { text: 'c' })
    expectProblem(third, 429, 'TOOLGATE_RATE_LIMITED')
    expect(third.headers['ratelimit-limit']).toBe('2')
  })

  it('a tool\'s own rateLimitMax leaves the same principal\'s other tools alone', async () => {
    const app = await testApp({ toolLimits: { echo: { rateLimitMax: 1 } } })
    await call(app, 'echo', { text: 'a' })
    expectProblem(await call(app, 'echo', { text: 'b' }), 429, 'TOOLGATE_RATE_LIMITED')
    expect((await call(app, 'slow_write', { ms: 0 })).statusCode).toBe(200)
  })
})

describe('memory pressure', () => {
  /** The pressure monitor samples memory once a second: wait for the first sample, bounded. */
  async function underPressure (app: FastifyInstance): Promise<LightMyRequestResponse> {
    const deadline = Date.now() + 5_000
    let response = await call(app, 'echo', { text: 'hi' })
    while (response.statusCode !== 503 && Date.now() < deadline) {
      await sleep(100)
      response = await call(app, 'echo', { text: 'hi' })
    }
    return response
  }

  it('past maxHeapUsedBytes a tool call is 503 TOOLGATE_OVERLOADED with Retry-After, and never runs', async () => {
    const app = await testApp({ maxHeapUsedBytes: 1 })
    const response = await underPressure(app)
    expectProblem(response, 503, 'TOOLGATE_OVERLOADED')
    expect(Number(response.headers['retry-after'])).toBeGreaterThan(0)
    runs.clear()
    expectProblem(await call(app, 'echo', { text: 'again' }), 503, 'TOOLGATE_OVERLOADED')
    expect(runs.get('echo')).toBeUndefined()
  })

  it('keeps the 503 detail generic: no heap figure or other internal number reaches the caller', async () => {
    const app = await testApp({ maxHeapUsedBytes: 1 })
    const response = await underPressure(app)
    const body = expectProblem(response, 503, 'TOOLGATE_OVERLOADED')
    expect(body.detail).toBe(`Overloaded; the gateway log has the details under request ${String(response.headers['x-request-id'])}`)
  })

  it.each(['/healthz', '/readyz', '/metrics'])('%s still answers 200 while tool calls are refused for memory pressure', async url => {
    const app = await testApp({ maxHeapUsedBytes: 1 })
    expect((await underPressure(app)).statusCode).toBe(503)
    expect((await app.inject({ method: 'GET', url })).statusCode).toBe(200)
  })
})
