import { describe, expect, it } from 'vitest'
import { auth, KEYS, testApp } from './helpers.js'

const ORIGIN = 'https://app.example.com'
const preflight = (url: string, origin = ORIGIN, method = 'POST') => ({
  method: 'OPTIONS' as const, url,
  headers: { origin, 'access-control-request-method': method, 'access-control-request-headers': 'x-api-key, content-type, idempotency-key' },
})

describe('CORS', () => {
  it('is off by default: no preflight answer, no CORS headers on answers', async () => {
    const app = await testApp()
    const response = await app.inject(preflight('/tools/echo'))
    expect(response.statusCode).not.toBe(204)
    expect(response.headers['access-control-allow-origin']).toBeUndefined()
    const call = await app.inject({ method: 'POST', url: '/tools/echo', headers: { ...auth(KEYS.admin), origin: ORIGIN }, payload: { text: 'x' } })
    expect(call.headers['access-control-allow-origin']).toBeUndefined()
  })

  it.each([['POST', '/tools/echo'], ['GET', '/tools'], ['GET', '/tools/echo'], ['GET', '/openapi.json']])('answers the preflight of %s %s for an allowed origin, without credentials', async (method, url) => {
    const app = await testApp({ corsOrigins: [ORIGIN] })
    const response = await app.inject(preflight(url, ORIGIN, method))
    expect(response.statusCode).toBe(204)
    expect(response.headers['access-control-allow-origin']).toBe(ORIGIN)
    expect(response.headers['access-control-allow-methods']).toContain(method)
    expect(String(response.headers['access-control-allow-headers']).toLowerCase()).toContain('x-api-key')
    expect(response.headers['access-control-allow-credentials']).toBeUndefined()
  })

  it('a real call from an allowed origin carries the CORS headers, with the gateway headers exposed', async () => {
    const app = await testApp({ corsOrigins: [ORIGIN] })
    const call = await app.inject({ method: 'POST', url: '/tools/echo', headers: { ...auth(KEYS.admin), origin: ORIGIN }, payload: { text: 'x' } })
    expect(call.statusCode).toBe(200)
    expect(call.headers['access-control-allow-origin']).toBe(ORIGIN)
    expect(String(call.headers['access-control-expose-headers'])).toContain('X-Request-Id')
    // Refusals too, or a browser script could not read why it was refused.
    const refused = await app.inject({ method: 'POST', url: '/tools/echo', headers: { origin: ORIGIN }, payload: { text: 'x' } })
    expect(refused.statusCode).toBe(401)
    expect(refused.headers['access-control-allow-origin']).toBe(ORIGIN)
  })

  it('gives another origin nothing', async () => {
    const app = await testApp({ corsOrigins: [ORIGIN] })
    const response = await app.inject(preflight('/tools/echo', 'https://evil.example'))
    expect(response.headers['access-control-allow-origin']).toBeUndefined()
  })

  it('allows credentials only when configured, and never with "*"', async () => {
    const app = await testApp({ corsOrigins: [ORIGIN], corsCredentials: true })
    expect((await app.inject(preflight('/tools/echo'))).headers['access-control-allow-credentials']).toBe('true')
    await expect(testApp({ corsOrigins: ['*'], corsCredentials: true })).rejects.toThrow(/corsCredentials/)
  })
})

describe('CORS on refusals', () => {
  it('a browser can read why a request with a credential in its query string was refused', async () => {
    const app = await testApp({ corsOrigins: [ORIGIN] })
    const refused = await app.inject({ method: 'GET', url: '/tools?api_key=x', headers: { origin: ORIGIN } })
    expect(refused.statusCode).toBe(400)
    expect(refused.headers['access-control-allow-origin']).toBe(ORIGIN)
  })
})
