import { describe, expect, it } from 'vitest'
import { AuthFailureThrottle } from '../../src/services/auth/failure-throttle.js'
import { auth, KEYS, testApp } from './helpers.js'
import { expectProblem } from './problem-shape.js'

const list = (key: string, remoteAddress = '198.51.100.7') => ({ method: 'GET' as const, url: '/tools', headers: auth(key), remoteAddress })

describe('failed authentications slow a source address down', () => {
  it('past the limit, an address\'s failures get 429 with Retry-After', async () => {
    const app = await testApp({ authFailureLimit: 3 })
    for (let i = 0; i < 3; i++) expectProblem(await app.inject(list(`guess-${i}-0123456789`)), 401, 'TOOLGATE_UNAUTHENTICATED')
    const refused = await app.inject(list('guess-3-0123456789'))
    expectProblem(refused, 429, 'TOOLGATE_RATE_LIMITED')
    expect(Number(refused.headers['retry-after'])).toBeGreaterThan(50)
    // The credential is checked first: a valid key this process never saw still gets in.
    expect((await app.inject(list(KEYS.caller))).statusCode).toBe(200)
  })

  it('cannot lock a real principal out: a valid key gets in from the attacking address too', async () => {
    const app = await testApp({ authFailureLimit: 3 })
    for (let i = 0; i < 10; i++) await app.inject(list(`guess-${i}-0123456789`))
    expect((await app.inject(list(KEYS.admin))).statusCode).toBe(200)
  })

  it('other addresses are not affected', async () => {
    const app = await testApp({ authFailureLimit: 3 })
    for (let i = 0; i < 5; i++) await app.inject(list(`guess-${i}-0123456789`))
    expect((await app.inject(list(KEYS.caller, '203.0.113.9'))).statusCode).toBe(200)
    expectProblem(await app.inject(list('guess-x-0123456789', '203.0.113.9')), 401, 'TOOLGATE_UNAUTHENTICATED')
  })

  it('0 turns the slow-down off', async () => {
    const app = await testApp({ authFailureLimit: 0 })
    for (let i = 0; i < 30; i++) expectProblem(await app.inject(list(`guess-${i}-0123456789`)), 401)
  })
})

describe('AuthFailureThrottle', () => {
  it('answers a wait once past the limit, opens again when the window ends, and forgets the oldest address past its bound', () => {
    let now = 0
    const throttle = new AuthFailureThrottle({ maxFailures: 2, windowMs: 1_000, maxTracked: 2, now: () => now })
    expect(throttle.failed('a')).toBe(0)
    expect(throttle.failed('a')).toBe(0)
    expect(throttle.failed('a')).toBe(1_000)
    now = 400
    expect(throttle.failed('a')).toBe(600)
    now = 1_000
    expect(throttle.failed('a')).toBe(0)
    throttle.failed('b'); throttle.failed('b'); throttle.failed('c'); throttle.failed('d')
    expect(throttle.failed('b')).toBe(0) // forgotten: bounded memory beats a perfect count
  })
})
