import { describe, expect, it } from 'vitest'
import { ANONYMOUS } from '../../../src/services/auth/authenticate.js'
import { hashApiKey } from '../../../src/services/auth/api-keys.js'
import { expect401 } from './helpers.js'
import { promisedAuthenticator } from './helpers.js'

const KEY = 'ops-key-0123456789'
const authenticate = promisedAuthenticator({
  apiKeys: [{ principal: 'ops', sha256: hashApiKey(KEY), scopes: ['tools:read', 'tools:call'] }],
  jwt: undefined,
  authDisabled: false,
})

describe('createAuthenticator with API keys', () => {
  it('refuses a request without credentials with 401 and the bare challenge', async () => {
    const error = await expect401(authenticate({}), 'missing')
    expect(error.extensions.wwwAuthenticate).toBe('Bearer realm="toolgate"')
  })

  it('refuses a wrong key with 401 and an invalid_token challenge', async () => {
    const error = await expect401(authenticate({ 'x-api-key': 'ops-key-0123456780' }), 'invalid_key')
    expect(error.extensions.wwwAuthenticate).toBe('Bearer realm="toolgate", error="invalid_token", error_description="the API key is not valid"')
  })

  it.each([['1 character', 'x'], ['10k characters', 'k'.repeat(10_000)]])('refuses a %s key with 401, not another failure', async (_, key) => {
    await expect401(authenticate({ 'x-api-key': key }), 'invalid_key')
    await expect401(authenticate({ authorization: `Bearer ${key}` }), 'invalid_key')
  })

  it.each([
    ['X-Api-Key', { 'x-api-key': KEY }],
    ['Authorization: Bearer', { authorization: `Bearer ${KEY}` }],
    ['Authorization: ApiKey', { authorization: `ApiKey ${KEY}` }],
    ['a lowercase scheme', { authorization: `bearer ${KEY}` }],
  ])('accepts the right key sent as %s', async (_, headers) => {
    expect(await authenticate(headers)).toEqual({ id: 'ops', scopes: ['tools:read', 'tools:call'], via: 'api-key' })
  })

  it('refuses two credentials at once rather than picking one', async () => {
    const error = await expect401(authenticate({ 'x-api-key': KEY, authorization: 'Bearer other' }), 'malformed')
    expect(error.extensions.wwwAuthenticate).toMatch(/error="invalid_request"/)
  })

  it('refuses a repeated credential header', async () => {
    await expect401(authenticate({ 'x-api-key': [KEY, KEY] }), 'malformed')
  })

  it.each(['Basic b3BzOmtleQ==', 'Bearer', 'Bearer a b', ''])('refuses the Authorization header %j as malformed', async authorization => {
    await expect401(authenticate({ authorization }), 'malformed')
  })

  it('never echoes the presented key in the error', async () => {
    const error = await expect401(authenticate({ 'x-api-key': 'secret-guess-123' }), 'invalid_key')
    expect(JSON.stringify({ message: error.message, ...error.extensions })).not.toContain('secret-guess-123')
  })
})

describe('createAuthenticator without credentials configured', () => {
  const open = promisedAuthenticator({ apiKeys: [], jwt: undefined, authDisabled: false })

  it('makes every caller the anonymous principal with read and call scopes', async () => {
    expect(await open({})).toEqual({ id: 'anonymous', scopes: ['tools:read', 'tools:call', 'gateway:read'], via: 'anonymous' })
  })

  it('ignores whatever credential is sent', async () => {
    expect(await open({ authorization: 'Bearer whatever' })).toBe(ANONYMOUS)
  })
})

describe('createAuthenticator with authDisabled', () => {
  it('makes every caller anonymous even when keys are configured', async () => {
    const disabled = promisedAuthenticator({ apiKeys: [{ principal: 'ops', sha256: hashApiKey(KEY), scopes: [] }], jwt: undefined, authDisabled: true })
    expect(await disabled({})).toBe(ANONYMOUS)
  })
})
