import { createCipheriv, hkdfSync, randomBytes } from 'node:crypto'
import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import { RequestStateSeal, sealSource, type StatePayload } from '../../../src/services/mcp/request-state.js'

const payload: fc.Arbitrary<StatePayload> = fc.record({
  v: fc.constant(1 as const),
  approval: fc.stringMatching(/^[0-9a-f]{32}$/),
  nonce: fc.stringMatching(/^[0-9a-f]{32}$/),
  principal: fc.string({ minLength: 1, maxLength: 40 }),
  tool: fc.stringMatching(/^[a-z][a-z0-9_]{0,20}$/),
  expiresAt: fc.integer({ min: 0, max: 2 ** 45 }),
})

const seal = new RequestStateSeal(Buffer.alloc(32, 7))

describe('the requestState seal (AES-256-GCM)', () => {
  it('opens what it sealed, exactly', () => {
    fc.assert(fc.property(payload, p => { expect(seal.open(seal.seal(p))).toEqual(p) }))
  })

  it('opens nothing that differs from a sealed state in any byte', () => {
    fc.assert(fc.property(payload, fc.nat(), fc.integer({ min: 1, max: 255 }), (p, at, flip) => {
      const bytes = Buffer.from(seal.seal(p), 'base64url')
      bytes[at % bytes.length]! ^= flip
      expect(seal.open(bytes.toString('base64url'))).toBeUndefined()
    }))
  })

  it('opens nothing cut short, lengthened, or sealed with another secret', () => {
    const other = new RequestStateSeal(Buffer.alloc(32, 8))
    fc.assert(fc.property(payload, fc.nat(), (p, cut) => {
      const state = seal.seal(p)
      expect(seal.open(state.slice(0, cut % state.length))).toBeUndefined()
      expect(seal.open(state + 'AA')).toBeUndefined()
      expect(other.open(state)).toBeUndefined()
    }))
  })

  it('never throws on arbitrary text or arbitrary base64url bytes, and opens none of it', () => {
    fc.assert(fc.property(fc.string({ maxLength: 300 }), text => { expect(seal.open(text)).toBeUndefined() }))
    fc.assert(fc.property(fc.uint8Array({ maxLength: 400 }), bytes => { expect(seal.open(Buffer.from(bytes).toString('base64url'))).toBeUndefined() }))
  })

  it('refuses what the right key sealed when it is not a state of this format (independent sealer)', () => {
    // The documented format, rebuilt here: HKDF-SHA256 key, AES-256-GCM, context as AAD, iv|ciphertext|tag.
    const context = Buffer.from('toolgate mcp requestState v1')
    const key = Buffer.from(hkdfSync('sha256', Buffer.alloc(32, 7), Buffer.alloc(0), context, 32))
    const sealRaw = (text: string, aad = context): string => {
      const iv = randomBytes(12)
      const cipher = createCipheriv('aes-256-gcm', key, iv).setAAD(aad)
      const body = Buffer.concat([cipher.update(text, 'utf8'), cipher.final()])
      return Buffer.concat([iv, body, cipher.getAuthTag()]).toString('base64url')
    }
    const good = { v: 1, approval: 'a', nonce: 'n', principal: 'p', tool: 't', expiresAt: 1 }
    expect(seal.open(sealRaw(JSON.stringify(good)))).toEqual(good) // the rebuilt format is the real one
    for (const text of ['not json', 'null', '[]', JSON.stringify({ ...good, v: 2 }), JSON.stringify({ ...good, admin: true }), JSON.stringify({ ...good, expiresAt: 'soon' })]) {
      expect(seal.open(sealRaw(text)), text).toBeUndefined()
    }
    expect(seal.open(sealRaw(JSON.stringify(good), Buffer.from('another use')))).toBeUndefined()
  })

  it('reveals nothing: the principal and the approval id are not in the state, and two seals of one payload differ', () => {
    const p: StatePayload = { v: 1, approval: 'a'.repeat(32), nonce: 'b'.repeat(32), principal: 'alice', tool: 'pay', expiresAt: 1 }
    const [one, two] = [seal.seal(p), seal.seal(p)]
    expect(one).not.toBe(two)
    for (const state of [one, two]) {
      const decoded = Buffer.from(state, 'base64url').toString('latin1')
      expect(decoded).not.toContain('alice')
      expect(decoded).not.toContain('a'.repeat(32))
    }
  })

  it('refuses a secret shorter than 32 bytes', () => {
    expect(() => new RequestStateSeal(Buffer.alloc(31))).toThrow(/32 bytes/)
  })

  it('a shared secret is offered, read back, and asked for again only after a while', async () => {
    const offered: Buffer[] = []
    const stored = Buffer.alloc(32, 9)
    const source = sealSource(undefined, async candidate => { offered.push(candidate); return stored })
    const [first, second] = [await source(), await source()]
    expect(first).toBe(second)
    expect(offered).toHaveLength(1)
    expect(new RequestStateSeal(stored).open(first.seal({ v: 1, approval: 'x', nonce: 'y', principal: 'p', tool: 't', expiresAt: 1 }))).toMatchObject({ approval: 'x' })
  })
})
