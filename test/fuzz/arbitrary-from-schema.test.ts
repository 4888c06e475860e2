import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import { z } from 'zod'
import { arbitraryFromSchema, type JsonSchema } from './arbitrary-from-schema.js'
import { brokenFromSchema } from './broken-from-schema.js'

/** One schema using every keyword the generators support, and no refinement JSON Schema cannot carry. */
const everything = z.object({
  name: z.string().min(2).max(10),
  slug: z.string().regex(/^[a-z][a-z0-9-]{0,15}$/),
  id: z.uuid(),
  at: z.iso.datetime(),
  link: z.url(),
  count: z.number().int().min(-5).max(5),
  ratio: z.number().gt(0).lt(1),
  on: z.boolean(),
  color: z.enum(['red', 'green']),
  kind: z.literal('fixed'),
  tags: z.array(z.string().max(3)).min(1).max(3),
  either: z.union([z.number().int().min(0).max(9), z.boolean()]),
  size: z.number().int().min(1).max(9).default(3),
  nested: z.object({ deep: z.string().max(4) }).strict().optional(),
}).strict()

const schema = z.toJSONSchema(everything, { io: 'input' }) as JsonSchema

describe('generators derived from a JSON Schema', () => {
  it('every value generated from the schema is accepted by the zod schema it came from', () => {
    fc.assert(fc.property(arbitraryFromSchema(schema), value => {
      expect(everything.safeParse(value).error?.issues).toBeUndefined()
    }), { numRuns: 300 })
  })

  it('every broken value is refused by the zod schema it came from', () => {
    fc.assert(fc.property(brokenFromSchema(schema, arbitraryFromSchema(schema)), broken => {
      expect(everything.safeParse(broken.value).success, broken.how).toBe(false)
    }), { numRuns: 300 })
  })

  it('broken values carry no __proto__ or constructor key, which the gateway refuses as malformed before validating', () => {
    fc.assert(fc.property(brokenFromSchema(schema, arbitraryFromSchema(schema)), broken => {
      expect(JSON.stringify(broken.value) ?? '').not.toMatch(/"(__proto__|constructor)":/)
    }), { numRuns: 300 })
  })

  it('hints mix extra values into the property they name', () => {
    const hinted = arbitraryFromSchema({ type: 'object', properties: { a: { type: 'string', pattern: '^x$' } }, required: ['a'] }, { hints: { '/a': fc.constant('hinted') } })
    const seen = new Set(fc.sample(hinted, 200).map(v => (v as { a: string }).a))
    expect(seen).toEqual(new Set(['x', 'hinted']))
  })
})
