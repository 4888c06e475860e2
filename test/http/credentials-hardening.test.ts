import { afterEach, describe, expect, it } from 'vitest'
import type { FastifyInstance } from 'fastify'
import { buildApp } from '../../plugins/app.js'
import { loadConfig } from '../../src/services/config.js'
import { redactUrl } from '../../src/services/auth/query-credentials.js'
import { httpTools } from '../fixtures/http-tools.js'
import { API_KEYS, auth, KEYS, testApp } from './helpers.js'
import { expectProblem } from './problem-shape.js'
import { listening, rawRequest } from './raw-http.js'

const apps: FastifyInstance[] = []
afterEach(async () => { await Promise.all(apps.splice(0).map(app => app.close())) })

const post = (headers: string[]): string => {
  const body = '{"text":"hi"}'
  return ['POST /tools/echo HTTP/1.1', 'Host: 127.0.0.1', 'Content-Type: application/json', `Content-Length: ${body.length}`, 'Connection: close', ...headers, '', body].join('\r\n')
}

describe('repeated credential headers', () => {
  it('refuses a repeated Authorization header with 401 invalid_request, even when the first one is valid', async () => {
    const port = await listening(await testApp())
    const response = await rawRequest(port, post([`Authorization: ApiKey ${KEYS.admin}`, 'Authorization: ApiKey someone-elses-key']))
    expect(response.status).toBe(401)
    expect(response.headers).toMatch(/content-type: application\/problem\+json/i)
    expect(response.headers).toContain('error="invalid_request"')
    expect(JSON.parse(response.body)).toMatchObject({ code: 'TOOLGATE_UNAUTHENTICATED', detail: 'a credential header is repeated' })
  })

  it('refuses a repeated X-Api-Key header the same way', async () => {
    const port = await listening(await testApp())
    const response = await rawRequest(port, post([`X-Api-Key: ${KEYS.admin}`, `X-Api-Key: ${KEYS.admin}`]))
    expect(response.status).toBe(401)
    expect(JSON.parse(response.body)).toMatchObject({ detail: 'a credential header is repeated' })
  })

  it('still accepts one Authorization header over a real socket', async () => {
    const port = await listening(await testApp())
    expect((await rawRequest(port, post([`Authorization: ApiKey ${KEYS.admin}`]))).status).toBe(200)
  })
})

describe('credentials in the query string', () => {
  for (const name of ['api_key', 'access_token', 'token', 'key', 'apiKey', 'X-API-KEY']) {
    it(`refuses ?${name}= with 400 and an errors entry naming it, even with a valid key`, async () => {
      const app = await testApp()
      const response = await app.inject({ method: 'POST', url: `/tools/echo?${name}=${KEYS.admin}`, payload: { text: 'hi' } })
      const body = expectProblem(response, 400, 'TOOLGATE_MALFORMED_REQUEST')
      expect(body.detail).toMatch(/query string/)
      expect(body.errors).toEqual([{ pointer: `/query/${name}`, message: expect.any(String), code: 'credential_in_query' }])
    })
  }

  it('refuses them on every route, the document and health included', async () => {
    const app = await testApp()
    for (const url of ['/tools?token=x', '/openapi.json?access_token=x', '/healthz?api_key=x', '/nowhere?key=x']) {
      expectProblem(await app.inject({ method: 'GET', url, headers: auth(KEYS.admin) }), 400, 'TOOLGATE_MALFORMED_REQUEST')
    }
  })

  it('leaves other query parameters alone', async () => {
    const app = await testApp()
    expect((await app.inject({ method: 'POST', url: '/tools/echo?dryRun=false', payload: { text: 'hi' }, headers: auth(KEYS.admin) })).statusCode).toBe(200)
  })

  it('keeps the credential out of the log', async () => {
    const lines: string[] = []
    const config = loadConfig({}, { apiKeys: API_KEYS, logLevel: 'info' })
    const app = await buildApp({ config, tools: httpTools, logger: { level: 'info', stream: { write: (line: string) => { lines.push(line) } } } })
    apps.push(app)
    await app.inject({ method: 'POST', url: `/tools/echo?mode=normal&api_key=${KEYS.admin}`, payload: { text: 'hi' } })
    await app.inject({ method: 'GET', url: `/healthz?access%5Ftoken=${KEYS.caller}` })
    expect(lines.join('\n')).toContain('[REDACTED]')
    expect(lines.join('\n')).not.toContain(KEYS.admin)
    expect(lines.join('\n')).not.toContain(KEYS.caller)
  })

  it('redacts every spelling of a credential parameter and keeps the rest of the URL', () => {
    expect(redactUrl('/tools/x?mode=plan&Access-Token=abc&x=1&token')).toBe('/tools/x?mode=plan&Access-Token=[REDACTED]&x=1&token')
    expect(redactUrl('/a?%61pi_key=s3cret')).toBe('/a?%61pi_key=[REDACTED]')
  })
})
