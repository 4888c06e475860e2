import fc from 'fast-check'
import { describe, it } from 'vitest'
import { compileGlob } from '../../../src/services/auth/glob.js'
import { createPermissionRules, type Rule } from '../../../src/services/auth/rules.js'

/** Reference glob matcher over code points: plain dynamic programming, no RegExp. */
function globMatches (glob: string, text: string): boolean {
  const g = Array.from(glob)
  const t = Array.from(text)
  // row[j]: does the glob so far match t[0..j)?
  let row = t.map(() => false).concat(false)
  row[0] = true
  for (const char of g) {
    const next = row.map(() => false)
    if (char === '*') {
      let seen = false
      for (let j = 0; j <= t.length; j++) { seen = seen || row[j]!; next[j] = seen }
    } else {
      for (let j = 1; j <= t.length; j++) next[j] = row[j - 1]! && (char === '?' || char === t[j - 1])
    }
    row = next
  }
  return row[t.length]!
}

// Small alphabets so globs and ids collide often; the glob alphabet adds RegExp syntax and an astral character.
const idChar = fc.constantFrom('a', 'b', '_')
const toolId = fc.string({ unit: idChar, maxLength: 6 })
const glob = fc.string({ unit: fc.constantFrom('a', 'b', '_', '*', '?'), maxLength: 5 })
const principal = fc.constantFrom('alice', 'bob', '*')
const rule: fc.Arbitrary<Rule> = fc.record({ principal, allow: fc.array(glob, { maxLength: 3 }), deny: fc.array(glob, { maxLength: 3 }) })
const rules = fc.array(rule, { minLength: 1, maxLength: 4 })
const caller = fc.constantFrom('alice', 'bob', 'carol')

const applicable = (all: Rule[], who: string): Rule[] => all.filter(r => r.principal === who || r.principal === '*')

describe('permission rules, by property', () => {
  it('never allows a tool matched by an applicable deny glob', () => {
    fc.assert(fc.property(rules, caller, toolId, (all, who, id) => {
      const denied = applicable(all, who).some(r => r.deny.some(g => globMatches(g, id)))
      return !denied || !createPermissionRules(all)(who, id)
    }))
  })

  it('never allows a tool that no applicable allow glob matches, once rules exist', () => {
    fc.assert(fc.property(rules, caller, toolId, (all, who, id) => {
      const allowedByGlob = applicable(all, who).some(r => r.allow.some(g => globMatches(g, id)))
      return allowedByGlob || !createPermissionRules(all)(who, id)
    }))
  })

  it('allows exactly what is allowed and not denied', () => {
    fc.assert(fc.property(rules, caller, toolId, (all, who, id) => {
      const mine = applicable(all, who)
      const expected = mine.some(r => r.allow.some(g => globMatches(g, id))) && !mine.some(r => r.deny.some(g => globMatches(g, id)))
      return createPermissionRules(all)(who, id) === expected
    }))
  })

  it('allows everything when there are no rules', () => {
    fc.assert(fc.property(fc.string(), fc.string(), (who, id) => createPermissionRules([])(who, id)))
  })

  it('compiles globs that match exactly what the reference matcher matches', () => {
    const unit = fc.constantFrom('a', 'b', '*', '?', '.', '+', '(', ')', '[', ']', '{', '}', '\\', '^', '$', '|', '/', '-', '\u{1F600}')
    const text = fc.string({ unit: fc.constantFrom('a', 'b', '.', '(', '\\', '$', '-', '\u{1F600}'), maxLength: 8 })
    fc.assert(fc.property(fc.string({ unit, maxLength: 6 }), text, (g, t) => compileGlob(g).test(t) === globMatches(g, t)), { numRuns: 2000 })
  })
})
