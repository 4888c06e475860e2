import { randomBytes } from 'node:crypto'
import { describe, expect, it } from 'vitest'
import { Sealer } from '../../../src/services/upstreams/credentials/sealer.js'

const key = (): string => randomBytes(32).toString('base64')

describe('credentials sealed at rest', () => {
  it('opens what it sealed, and nothing of the plain text shows in the sealed form', async () => {
    const sealer = Sealer.fromSetting(key())
    const sealed = await sealer.seal('{"value":"a-token-of-an-upstream"}')
    expect(sealed).not.toContain('a-token-of-an-upstream')
    expect(await sealer.open(sealed)).toBe('{"value":"a-token-of-an-upstream"}')
  })

  it('rotates: a new key first seals, the old one still opens what it sealed; dropped, it opens nothing', async () => {
    const [old, next] = [key(), key()]
    const sealedBefore = await Sealer.fromSetting(old).seal('before')
    const rotated = Sealer.fromSetting(`${next},${old}`)
    expect(await rotated.open(sealedBefore)).toBe('before')
    const sealedAfter = await rotated.seal('after')
    expect(await Sealer.fromSetting(next).open(sealedAfter)).toBe('after')
    expect(await Sealer.fromSetting(next).open(sealedBefore)).toBeUndefined()
  })

  it('refuses what was tampered with or is no sealed value at all', async () => {
    const sealer = Sealer.fromSetting(key())
    const parts = (await sealer.seal('payload')).split('.')
    parts[3] = Buffer.from('x'.repeat(7)).toString('base64url')
    expect(await sealer.open(parts.join('.'))).toBeUndefined()
    expect(await sealer.open('not.a.jwe')).toBeUndefined()
  })

  it('refuses a key that is not 32 bytes, naming the setting', () => {
    expect(() => Sealer.fromSetting(randomBytes(16).toString('base64'))).toThrow(/CREDENTIALS_KEY.*16 bytes/)
    expect(() => Sealer.fromSetting(' , ')).toThrow(/CREDENTIALS_KEY.*no key/)
  })
})
