import { createServer, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import { exportJWK } from 'jose'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { GatewayError } from '../../../src/core/errors.js'
import { esKeys, expect401, jwtConfig, rejectionOf, sign, type EsKeys } from './helpers.js'
import { promisedAuthenticator, type PromisedAuthenticate } from './helpers.js'

let keys: EsKeys
let server: Server
let baseUrl: string
let requests = 0

beforeAll(async () => {
  keys = await esKeys()
  const jwks = JSON.stringify({ keys: [{ ...(await exportJWK(keys.publicKey)), kid: 'k1', alg: 'ES256', use: 'sig' }] })
  server = createServer((request, response) => {
    requests++
    if (request.url === '/jwks.json') response.writeHead(200, { 'content-type': 'application/json' }).end(jwks)
    else response.writeHead(500).end('down')
  })
  await new Promise<void>(resolve => server.listen(0, '127.0.0.1', resolve))
  baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}`
})

afterAll(async () => {
  await new Promise(resolve => server.close(resolve))
})

const authenticatorFor = (path: string): PromisedAuthenticate =>
  promisedAuthenticator({ apiKeys: [], jwt: jwtConfig({ jwksUrl: `${baseUrl}${path}` }), authDisabled: false })
const bearer = (token: string): { authorization: string } => ({ authorization: `Bearer ${token}` })

describe('JWT with a JWKS URL', () => {
  it('accepts a token signed with a key from the set, fetching the set once', async () => {
    const authenticate = authenticatorFor('/jwks.json')
    const before = requests
    const token = await sign(keys.privateKey, { scope: 'tools:read' }, { kid: 'k1' })
    expect(await authenticate(bearer(token))).toEqual({ id: 'jwt:alice', scopes: ['tools:read'], via: 'jwt' })
    expect(await authenticate(bearer(token))).toEqual({ id: 'jwt:alice', scopes: ['tools:read'], via: 'jwt' })
    expect(requests - before).toBe(1)
  })

  it('refuses a token whose kid is not in the set', async () => {
    const error = await expect401(authenticatorFor('/jwks.json')(bearer(await sign(keys.privateKey, {}, { kid: 'unknown' }))), 'invalid_token')
    expect(error.message).toBe('no key matches the token')
  })

  it('answers 503, not 401, when the key server fails', async () => {
    const error = await rejectionOf(authenticatorFor('/broken')(bearer(await sign(keys.privateKey, {}, { kid: 'k1' }))))
    expect(error).toBeInstanceOf(GatewayError)
    expect(error).toMatchObject({ code: 'TOOLGATE_UNAVAILABLE', status: 503, extensions: { retryAfter: 5 } })
  })

  it('answers 503 when the key server cannot be reached', async () => {
    const closed = createServer()
    await new Promise<void>(resolve => closed.listen(0, '127.0.0.1', resolve))
    const { port } = closed.address() as AddressInfo
    await new Promise(resolve => closed.close(resolve))
    const authenticate = promisedAuthenticator({ apiKeys: [], jwt: jwtConfig({ jwksUrl: `http://127.0.0.1:${port}/jwks.json` }), authDisabled: false })
    expect(await rejectionOf(authenticate(bearer(await sign(keys.privateKey, {}, { kid: 'k1' }))))).toMatchObject({ code: 'TOOLGATE_UNAVAILABLE' })
  })
})
