import { beforeAll, describe, expect, it } from 'vitest'
import { AUDIENCE, esKeys, ISSUER, sign, type EsKeys } from '../services/auth/helpers.js'
import { testApp } from './helpers.js'
import { expectProblem } from './problem-shape.js'

let keys: EsKeys
let otherKeys: EsKeys
beforeAll(async () => { [keys, otherKeys] = await Promise.all([esKeys(), esKeys()]) })

const jwtApp = () => testApp({ apiKeys: [], jwt: { issuer: ISSUER, audience: AUDIENCE, algorithms: ['ES256'], key: keys.pem } })
const callWith = (token: string) => ({ method: 'POST' as const, url: '/tools/echo', headers: { authorization: `Bearer ${token}` }, payload: { text: 'hi' } })
const base64url = (value: object): string => Buffer.from(JSON.stringify(value)).toString('base64url')

describe('JWT bearer tokens over HTTP', () => {
  it('a valid token calls the tool as its subject', async () => {
    const app = await jwtApp()
    const response = await app.inject(callWith(await sign(keys.privateKey, { scope: 'tools:read tools:call' })))
    expect(response.statusCode).toBe(200)
  })

  it('an expired token is 401 with error="invalid_token"', async () => {
    const app = await jwtApp()
    const response = await app.inject(callWith(await sign(keys.privateKey, undefined, { expiresAt: Math.floor(Date.now() / 1000) - 600 })))
    expectProblem(response, 401, 'TOOLGATE_UNAUTHENTICATED')
    expect(response.headers['www-authenticate']).toContain('error="invalid_token"')
    expect(response.headers['www-authenticate']).toContain('expired')
  })

  it('a token for another audience is 401', async () => {
    const app = await jwtApp()
    expectProblem(await app.inject(callWith(await sign(keys.privateKey, undefined, { audience: 'someone-else' }))), 401, 'TOOLGATE_UNAUTHENTICATED')
  })

  it('an alg:none token is 401', async () => {
    const app = await jwtApp()
    const now = Math.floor(Date.now() / 1000)
    const token = `${base64url({ alg: 'none', typ: 'JWT' })}.${base64url({ sub: 'mallory', iss: ISSUER, aud: AUDIENCE, exp: now + 600, scope: 'tools:call' })}.`
    expectProblem(await app.inject(callWith(token)), 401, 'TOOLGATE_UNAUTHENTICATED')
  })

  it('a token signed with another key is 401', async () => {
    const app = await jwtApp()
    expectProblem(await app.inject(callWith(await sign(otherKeys.privateKey))), 401, 'TOOLGATE_UNAUTHENTICATED')
  })

  it('a token without the tools:call scope is 403 with error="insufficient_scope"', async () => {
    const app = await jwtApp()
    const response = await app.inject(callWith(await sign(keys.privateKey, { scope: 'tools:read' })))
    expectProblem(response, 403, 'TOOLGATE_FORBIDDEN')
    expect(response.headers['www-authenticate']).toContain('error="insufficient_scope"')
  })
})

describe('principals from different authenticators stay apart', () => {
  it('an API key named alice and a token whose sub is alice share no notes and no idempotency record', async () => {
    const { createNotesTools } = await import('../../tools/notes.js')
    const { hashApiKey } = await import('../../src/services/auth/api-keys.js')
    const app = await testApp({
      apiKeys: [{ principal: 'alice', sha256: hashApiKey('alices-api-key-0123456789'), scopes: ['tools:read', 'tools:call'] }],
      jwt: { issuer: ISSUER, audience: AUDIENCE, algorithms: ['ES256'], key: keys.pem },
    }, createNotesTools())
    const asKey = { 'x-api-key': 'alices-api-key-0123456789' }
    const asToken = { authorization: `Bearer ${await sign(keys.privateKey, { scope: 'tools:read tools:call' })}` }
    const write = (headers: Record<string, string>, text: string) =>
      app.inject({ method: 'POST', url: '/tools/notes_write', headers: { ...headers, 'idempotency-key': 'same-key' }, payload: { key: 'diary', text } })
    expect((await write(asKey, 'from the key')).statusCode).toBe(200)
    // Same idempotency key, other input: for one principal that would be 422; here it is a new call.
    const byToken = await write(asToken, 'from the token')
    expect(byToken.statusCode, byToken.body).toBe(200)
    expect(byToken.headers['idempotent-replayed']).toBeUndefined()
    const read = async (headers: Record<string, string>) => (await app.inject({ method: 'POST', url: '/tools/notes_read', headers, payload: { key: 'diary' } })).json<{ text: string }>().text
    expect(await read(asKey)).toBe('from the key')
    expect(await read(asToken)).toBe('from the token')
  })
})
