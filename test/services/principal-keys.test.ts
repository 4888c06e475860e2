import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import { domainOf, principalKey, principalToolKey } from '../../src/services/principal-keys.js'

const id = fc.string({ minLength: 1, maxLength: 12, unit: fc.constantFrom('a', 'b', '/', '|', ':', '1', '2') })
const session = fc.option(fc.string({ minLength: 1, maxLength: 6, unit: fc.constantFrom('a', 'b', '/', ':', '1') }), { nil: undefined })

describe('principal keys', () => {
  it('gives two different (principal, session) pairs two different domains, whatever the ids contain', () => {
    fc.assert(fc.property(id, session, id, session, (p1, s1, p2, s2) => {
      fc.pre(p1 !== p2 || s1 !== s2)
      expect(domainOf(p1, s1)).not.toBe(domainOf(p2, s2))
    }))
  })

  it('keeps principal "a/b" without a session apart from principal "a" in session "b"', () => {
    expect(domainOf('a/b', undefined)).not.toBe(domainOf('a', 'b'))
  })

  it('gives two different (principal, tool) pairs two different rate-limit keys, and never a principal key', () => {
    fc.assert(fc.property(id, id, id, id, (p1, t1, p2, t2) => {
      fc.pre(p1 !== p2 || t1 !== t2)
      expect(principalToolKey(p1, t1)).not.toBe(principalToolKey(p2, t2))
      expect(principalToolKey(p1, t1)).not.toBe(principalKey(p2))
    }))
  })
})
