import { describe, expect, it } from 'vitest'
import { runs } from '../fixtures/http-tools.js'
import { auth, KEYS, testApp } from './helpers.js'
import { expectProblem } from './problem-shape.js'

const json = { ...auth(KEYS.admin), 'content-type': 'application/json' }

describe('Fastify-level failures are problem+json too', () => {
  it('400 for malformed JSON', async () => {
    const app = await testApp()
    expectProblem(await app.inject({ method: 'POST', url: '/tools/echo', headers: json, payload: '{"text": ' }), 400, 'TOOLGATE_MALFORMED_REQUEST')
  })

  it('400 for a prototype-poisoning body, and the tool never runs', async () => {
    const app = await testApp()
    for (const payload of ['{"text":"a","__proto__":{"admin":true}}', '{"text":"a","constructor":{"prototype":{"admin":true}}}']) {
      expectProblem(await app.inject({ method: 'POST', url: '/tools/echo', headers: json, payload }), 400, 'TOOLGATE_MALFORMED_REQUEST')
    }
    expect(runs.get('echo')).toBeUndefined()
  })

  it('413 for a body over the limit', async () => {
    const app = await testApp({ bodyLimit: 1024 })
    const payload = JSON.stringify({ text: 'x'.repeat(2000) })
    expectProblem(await app.inject({ method: 'POST', url: '/tools/echo', headers: json, payload }), 413, 'TOOLGATE_PAYLOAD_TOO_LARGE')
  })

  it('415 for a body that is not JSON', async () => {
    const app = await testApp()
    const response = await app.inject({ method: 'POST', url: '/tools/echo', headers: { ...auth(KEYS.admin), 'content-type': 'text/plain' }, payload: 'hello' })
    expectProblem(response, 415, 'TOOLGATE_UNSUPPORTED_MEDIA_TYPE')
  })

  it('404 for an unknown route', async () => {
    const app = await testApp()
    expectProblem(await app.inject({ method: 'GET', url: '/nowhere' }), 404, 'TOOLGATE_NOT_FOUND')
  })

  it('405 with Allow for a known path under another method', async () => {
    const app = await testApp()
    const response = await app.inject({ method: 'DELETE', url: '/tools/echo', headers: auth(KEYS.admin) })
    expectProblem(response, 405, 'TOOLGATE_METHOD_NOT_ALLOWED')
    expect(response.headers.allow).toContain('POST')
    expect(response.headers.allow).toContain('GET')
  })

  it('honours a safe X-Request-Id and generates one otherwise', async () => {
    const app = await testApp()
    const honoured = await app.inject({ method: 'GET', url: '/healthz', headers: { 'x-request-id': 'trace-123' } })
    expect(honoured.headers['x-request-id']).toBe('trace-123')
    const unsafe = await app.inject({ method: 'GET', url: '/healthz', headers: { 'x-request-id': 'bad id\nwith newline' } })
    expect(unsafe.headers['x-request-id']).toMatch(/^[0-9a-f]{32}$/)
    const problem = await app.inject({ method: 'GET', url: '/nowhere', headers: { 'x-request-id': 'trace-404' } })
    expect(problem.headers['x-request-id']).toBe('trace-404')
    expect(problem.json().instance).toContain('trace-404')
  })

  it('400 for an invalid X-Session-Id or query option, with the problem shape', async () => {
    const app = await testApp()
    expectProblem(await app.inject({ method: 'POST', url: '/tools/echo', headers: { ...json, 'x-session-id': 'has space' }, payload: '{"text":"a"}' }), 400, 'TOOLGATE_INVALID_INPUT')
    expectProblem(await app.inject({ method: 'POST', url: '/tools/echo?mode=yolo', headers: json, payload: '{"text":"a"}' }), 400, 'TOOLGATE_INVALID_INPUT')
  })
})
