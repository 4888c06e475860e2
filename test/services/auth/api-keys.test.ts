import { describe, expect, it } from 'vitest'
import { createApiKeyVerifier, hashApiKey } from '../../../src/services/auth/api-keys.js'
import { ConfigError } from '../../../src/services/config.js'

const verify = createApiKeyVerifier([
  { principal: 'ci', sha256: hashApiKey('ci-key'), scopes: ['tools:read'] },
  { principal: 'ops', sha256: hashApiKey('ops-key'), scopes: ['tools:read', 'tools:call'] },
])

describe('hashApiKey', () => {
  it('is the lowercase hex SHA-256 of the UTF-8 key', () => {
    expect(hashApiKey('abc')).toBe('ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad')
  })
})

describe('createApiKeyVerifier', () => {
  it('maps the right key to its principal and scopes', () => {
    expect(verify('ops-key')).toEqual({ id: 'ops', scopes: ['tools:read', 'tools:call'], via: 'api-key' })
  })

  it('tells keys apart: each key names its own principal', () => {
    expect(verify('ci-key')?.id).toBe('ci')
  })

  it('returns undefined for a wrong key', () => {
    expect(verify('ops-kez')).toBeUndefined()
  })

  it.each([['empty', ''], ['one character', 'x'], ['10k characters', 'k'.repeat(10_000)]])('returns undefined, never throws, for a %s key', (_, key) => {
    expect(verify(key)).toBeUndefined()
  })

  it('does not accept the stored digest itself as the key', () => {
    expect(verify(hashApiKey('ops-key'))).toBeUndefined()
  })

  it('hands out frozen principals, so a caller cannot widen the scopes of later requests', () => {
    const principal = verify('ci-key')!
    expect(Object.isFrozen(principal)).toBe(true)
    expect(Object.isFrozen(principal.scopes)).toBe(true)
  })

  it('refuses at start-up one key configured for two principals', () => {
    const sha256 = hashApiKey('shared')
    expect(() => createApiKeyVerifier([
      { principal: 'a', sha256, scopes: [] },
      { principal: 'b', sha256, scopes: [] },
    ])).toThrow(ConfigError)
  })
})
