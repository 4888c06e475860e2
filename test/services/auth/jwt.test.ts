import { beforeAll, describe, expect, it } from 'vitest'
import { createJwtVerifier } from '../../../src/services/auth/jwt.js'
import { hashApiKey } from '../../../src/services/auth/api-keys.js'
import { ConfigError, parseConfig } from '../../../src/services/config.js'
import { esKeys, expect401, HS_SECRET, jwtConfig, nowSec, secretBytes, sign, unsecuredToken, type EsKeys } from './helpers.js'
import { promisedAuthenticator, type PromisedAuthenticate } from './helpers.js'

let keys: EsKeys
let other: EsKeys
let authenticate: PromisedAuthenticate

beforeAll(async () => {
  [keys, other] = await Promise.all([esKeys(), esKeys()])
  authenticate = promisedAuthenticator({ apiKeys: [], jwt: jwtConfig({ key: keys.pem }), authDisabled: false })
})

const bearer = (token: string): { authorization: string } => ({ authorization: `Bearer ${token}` })

describe('JWT with a static ES256 public key', () => {
  it('accepts a valid token: sub is the principal, scopes come from the scope claim', async () => {
    const principal = await authenticate(bearer(await sign(keys.privateKey)))
    expect(principal).toEqual({ id: 'jwt:alice', scopes: ['tools:read', 'tools:call'], via: 'jwt' })
  })

  it('refuses an expired token with reason expired', async () => {
    const token = await sign(keys.privateKey, {}, { expiresAt: nowSec() - 60 })
    const error = await expect401(authenticate(bearer(token)), 'expired')
    expect(error.extensions.wwwAuthenticate).toBe('Bearer realm="toolgate", error="invalid_token", error_description="token expired"')
  })

  it('accepts a token expired less than the clock tolerance ago', async () => {
    const token = await sign(keys.privateKey, {}, { expiresAt: nowSec() - 2 })
    expect((await authenticate(bearer(token))).id).toBe('jwt:alice')
  })

  it('refuses a token for another audience', async () => {
    const error = await expect401(authenticate(bearer(await sign(keys.privateKey, {}, { audience: 'another-service' }))), 'invalid_token')
    expect(error.message).toBe('audience mismatch')
  })

  it('refuses a token from another issuer', async () => {
    const error = await expect401(authenticate(bearer(await sign(keys.privateKey, {}, { issuer: 'https://evil.test' }))), 'invalid_token')
    expect(error.message).toBe('issuer mismatch')
  })

  it('refuses an unsecured alg:none token', async () => {
    const token = unsecuredToken({ iss: 'https://idp.test', aud: 'toolgate', sub: 'alice', exp: nowSec() + 300, scope: 'tools:call' })
    const error = await expect401(authenticate(bearer(token)), 'invalid_token')
    expect(error.message).toBe('algorithm not allowed')
  })

  it('refuses a token signed with another key', async () => {
    const error = await expect401(authenticate(bearer(await sign(other.privateKey))), 'invalid_token')
    expect(error.message).toBe('signature invalid')
  })

  it('refuses an HS256 token when only ES256 is pinned', async () => {
    const error = await expect401(authenticate(bearer(await sign(secretBytes(), {}, { alg: 'HS256' }))), 'invalid_token')
    expect(error.message).toBe('algorithm not allowed')
  })

  it('refuses an HS256 token keyed with the public PEM even when HS256 is configured (algorithm confusion)', async () => {
    const verify = createJwtVerifier(jwtConfig({ key: keys.pem, algorithms: ['ES256', 'HS256'] }))
    const token = await sign(secretBytes(keys.pem), {}, { alg: 'HS256' })
    await expect(verify(token)).rejects.toMatchObject({ reason: 'invalid_token', description: 'algorithm not allowed' })
  })

  it('refuses a token without sub', async () => {
    await expect401(authenticate(bearer(await sign(keys.privateKey, {}, { subject: null }))), 'invalid_token')
  })

  it('refuses a token without exp', async () => {
    await expect401(authenticate(bearer(await sign(keys.privateKey, {}, { expiresAt: null }))), 'invalid_token')
  })

  it('refuses a JWT-shaped token that is not JSON inside as malformed', async () => {
    await expect401(authenticate(bearer('abc.def.ghi')), 'malformed')
  })

  it('refuses a bearer token that is not a JWT when no API keys are configured', async () => {
    await expect401(authenticate(bearer('not-a-jwt')), 'malformed')
  })

  it('refuses a scope claim that is neither a string nor an array of strings', async () => {
    const error = await expect401(authenticate(bearer(await sign(keys.privateKey, { scope: 42 }))), 'invalid_token')
    expect(error.message).toBe('scope claim malformed')
  })

  it('accepts a PEM whose newlines arrive as \\n escapes (an environment variable)', async () => {
    const verify = createJwtVerifier(jwtConfig({ key: keys.pem.replace(/\n/g, '\\n') }))
    expect((await verify(await sign(keys.privateKey))).id).toBe('jwt:alice')
  })
})

describe('JWT with an HS256 shared secret', () => {
  const verify = createJwtVerifier(jwtConfig({ key: HS_SECRET, algorithms: ['HS256'], scopeClaim: 'scp' }))

  it('accepts a valid token and reads an array scope claim', async () => {
    const token = await sign(secretBytes(), { scp: ['tools:read'] }, { alg: 'HS256' })
    expect(await verify(token)).toEqual({ id: 'jwt:alice', scopes: ['tools:read'], via: 'jwt' })
  })

  it('gives no scopes when the scope claim is absent', async () => {
    expect((await verify(await sign(secretBytes(), {}, { alg: 'HS256' }))).scopes).toEqual([])
  })

  it('refuses a token signed with another secret', async () => {
    const token = await sign(secretBytes('another-shared-secret-of-32-bytes-or-more'), {}, { alg: 'HS256' })
    await expect(verify(token)).rejects.toMatchObject({ reason: 'invalid_token', description: 'signature invalid' })
  })
})

describe('JWT configuration checked at start-up', () => {
  it('refuses a key that is not a PEM public key', () => {
    expect(() => createJwtVerifier(jwtConfig({ key: '-----BEGIN PUBLIC KEY-----\nnot base64 at all, clearly\n-----END PUBLIC KEY-----' }))).toThrow(ConfigError)
  })

  it('refuses an EC P-256 key when only RSA algorithms are pinned', () => {
    expect(() => createJwtVerifier(jwtConfig({ key: keys.pem, algorithms: ['RS256'] }))).toThrow(/jwt.algorithms/)
  })

  it('refuses a shared secret when no HS* algorithm is pinned', () => {
    expect(() => createJwtVerifier(jwtConfig({ key: HS_SECRET, algorithms: ['ES256'] }))).toThrow(/jwt.algorithms/)
  })

  it('keeps the default RS256,ES256 list usable with an EC key', async () => {
    const verify = createJwtVerifier(jwtConfig({ key: keys.pem, algorithms: 'RS256,ES256' }))
    expect((await verify(await sign(keys.privateKey))).id).toBe('jwt:alice')
  })
})

describe('JWT issue time and principal names', () => {
  it('refuses a token issued further in the future than the clock tolerance', async () => {
    const token = await sign(keys.privateKey, { scope: 'tools:call' }, { issuedAt: nowSec() + 120 })
    const error = await expect401(authenticate(bearer(token)), 'invalid_token')
    expect(error.message).toBe('token issued in the future')
  })

  it('accepts a token issued in the future within the clock tolerance (5 s)', async () => {
    const token = await sign(keys.privateKey, { scope: 'tools:call' }, { issuedAt: nowSec() + 3 })
    expect((await authenticate(bearer(token))).id).toBe('jwt:alice')
  })

  it('keeps an API key principal and a token subject of the same name apart', async () => {
    const both = promisedAuthenticator({ apiKeys: [{ principal: 'alice', sha256: hashApiKey('alices-key'), scopes: ['tools:call'] }], jwt: jwtConfig({ key: keys.pem }), authDisabled: false })
    const byKey = await both({ 'x-api-key': 'alices-key' })
    const byToken = await both(bearer(await sign(keys.privateKey)))
    expect(byKey.id).toBe('alice')
    expect(byToken.id).not.toBe(byKey.id)
  })

  it('maps subjects onto plain principal ids only when the operator empties the prefix', async () => {
    const merged = promisedAuthenticator({ apiKeys: [], jwt: jwtConfig({ key: keys.pem, principalPrefix: '' }), authDisabled: false })
    expect((await merged(bearer(await sign(keys.privateKey)))).id).toBe('alice')
  })

  it('refuses at start-up an API key principal that a token subject could also name', () => {
    expect(() => parseConfig({ apiKeys: [{ principal: 'jwt:alice', sha256: 'a'.repeat(64) }], jwt: jwtConfig({ key: keys.pem }) }))
      .toThrow(/principal "jwt:alice" starts with the JWT principal prefix/)
  })
})
