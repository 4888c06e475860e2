import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import type { NamedTool } from '../../../src/core/bundles/named-tool.js'
import { toolSearchOf } from '../../../src/services/search/tool-search.js'
import { queryOf } from '../../../src/services/search/query.js'
import { GatewayError } from '../../../src/core/errors.js'
import { namedTools } from '../../../bench/generated-tools.js'

const TIMEOUT = 120_000
const entries = namedTools(300)
const search = toolSearchOf(entries, TIMEOUT)

/** Queries as models and people write them: words of the tools' vocabulary, misspelt, or anything at all. */
const word = fc.oneof(
  fc.constantFrom('get', 'invoice', 'customer', 'send', 'message', 'calendar', 'external', 'workspace', 'delete', 'repo', 'tickte', 'the'),
  fc.string({ minLength: 1, maxLength: 12 }),
)
const query = fc.array(word, { minLength: 1, maxLength: 10 }).map(words => words.join(' '))
/** Which tools a caller may see: a random subset, decided per name. */
const visibility = fc.func(fc.boolean()).map(decide => (named: NamedTool) => decide(named.name))

/** The query as the search takes it, or undefined when `queryOf` refuses it (400). */
function checked (raw: string): string | undefined {
  try {
    return queryOf(raw)
  } catch (error) {
    if (error instanceof GatewayError && error.code === 'TOOLGATE_INVALID_INPUT') return undefined
    throw error
  }
}

describe('tool search invariants', () => {
  it('gives the same hits for the same query, every time', () => {
    fc.assert(fc.property(query, fc.integer({ min: 1, max: 30 }), (raw, limit) => {
      const q = checked(raw)
      if (q === undefined) return
      const everyone = (): boolean => true
      const first = search.search(q, { limit, visible: everyone })
      // A fresh index over an equal array ranks alike: nothing depends on history.
      const fresh = toolSearchOf([...entries], TIMEOUT).search(q, { limit, visible: everyone })
      expect(search.search(q, { limit, visible: everyone })).toEqual(first)
      expect(fresh).toEqual(first)
    }), { numRuns: 60 })
  })

  it('never returns a tool the caller may not see, at most `limit` hits, sorted by score then name', () => {
    fc.assert(fc.property(query, fc.integer({ min: 1, max: 30 }), visibility, (raw, limit, visible) => {
      const q = checked(raw)
      if (q === undefined) return
      const hits = search.search(q, { limit, visible })
      expect(hits.length).toBeLessThanOrEqual(limit)
      for (const hit of hits) expect(visible(hit.named)).toBe(true)
      for (let i = 1; i < hits.length; i++) {
        const [a, b] = [hits[i - 1]!, hits[i]!]
        expect(a.score > b.score || (a.score === b.score && a.named.name < b.named.name)).toBe(true)
      }
    }), { numRuns: 150 })
  })

  it('fills the limit whenever enough visible tools match', () => {
    fc.assert(fc.property(query, fc.integer({ min: 1, max: 30 }), visibility, (raw, limit, visible) => {
      const q = checked(raw)
      if (q === undefined) return
      const all = search.search(q, { limit: entries.length, visible })
      expect(search.search(q, { limit, visible })).toEqual(all.slice(0, limit))
    }), { numRuns: 60 })
  })
})
