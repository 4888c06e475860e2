import { describe, expect, it } from 'vitest'
import { z } from 'zod'
import { defineTool } from '../../src/core/define-tool.js'
import { snapshotSchema } from '../../src/core/schema-snapshot.js'
import type { Tool, ToolDeclaration } from '../../src/core/tool.js'
import { catalogOf, echoDeclaration, rejectionOf } from './helpers.js'

function toolWithInput (inputSchema: z.ZodType) {
  const declaration = echoDeclaration({ inputSchema, outputSchema: z.unknown(), execute: (input: unknown) => input })
  return { declaration, tool: defineTool(declaration as unknown as ToolDeclaration) as unknown as Tool<z.ZodType, z.ZodType> }
}

// Each mutation below widens the original schema (checked first, so the test cannot pass by
// the mutation being a no-op) and must leave the tool's snapshot as strict as it was.
describe('mutating a schema after defineTool cannot widen what the tool accepts', () => {
  it('ignores a key added to a strict object shape', () => {
    const { declaration, tool } = toolWithInput(z.strictObject({ a: z.string() }))
    ;((declaration.inputSchema as z.ZodObject).shape as Record<string, z.ZodType>).extra = z.string()
    const input = { a: 'x', extra: 'y' }
    expect((declaration.inputSchema as z.ZodType).safeParse(input).success).toBe(true)
    expect(tool.inputSchema.safeParse(input).success).toBe(false)
  })

  it('ignores an option pushed onto a union', () => {
    const { declaration, tool } = toolWithInput(z.union([z.string(), z.boolean()]))
    ;((declaration.inputSchema as z.ZodUnion).options as z.ZodType[]).push(z.number())
    expect((declaration.inputSchema as z.ZodType).safeParse(1).success).toBe(true)
    expect(tool.inputSchema.safeParse(1).success).toBe(false)
  })

  it('ignores an option pushed onto a union nested in an object never read before', () => {
    const { declaration, tool } = toolWithInput(z.strictObject({ a: z.union([z.string(), z.boolean()]) }))
    const nested = ((declaration.inputSchema as z.ZodObject).shape.a as z.ZodUnion)
    ;(nested.options as z.ZodType[]).push(z.number())
    expect((declaration.inputSchema as z.ZodType).safeParse({ a: 1 }).success).toBe(true)
    expect(tool.inputSchema.safeParse({ a: 1 }).success).toBe(false)
  })

  it('ignores a key added to a nested strict object', () => {
    const { declaration, tool } = toolWithInput(z.object({ o: z.strictObject({ x: z.string() }) }))
    const nested = (declaration.inputSchema as z.ZodObject).shape.o as z.ZodObject
    ;(nested.shape as Record<string, z.ZodType>).extra = z.string()
    const input = { o: { x: 'a', extra: 'b' } }
    expect((declaration.inputSchema as z.ZodType).safeParse(input).success).toBe(true)
    expect(tool.inputSchema.safeParse(input).success).toBe(false)
  })

  it('ignores a key added to the shape literal the schema was built from', () => {
    const shape: Record<string, z.ZodType> = { a: z.string() }
    const { declaration, tool } = toolWithInput(z.strictObject(shape))
    shape.extra = z.string()
    expect((declaration.inputSchema as z.ZodType).safeParse({ a: 'x', extra: 'y' }).success).toBe(true)
    expect(tool.inputSchema.safeParse({ a: 'x', extra: 'y' }).success).toBe(false)
  })

  it('ignores an array element schema swapped in the definition', () => {
    const { declaration, tool } = toolWithInput(z.array(z.string()))
    ;((declaration.inputSchema as z.ZodArray)._zod.def as { element: unknown }).element = z.unknown()
    expect((declaration.inputSchema as z.ZodType).safeParse([1]).success).toBe(true)
    expect(tool.inputSchema.safeParse([1]).success).toBe(false)
  })

  it('keeps the invoked tool strict after the mutation, end to end', async () => {
    const declaration = echoDeclaration({ inputSchema: z.strictObject({ text: z.string() }) })
    const catalog = catalogOf([declaration])
    ;((declaration.inputSchema as z.ZodObject).shape as Record<string, z.ZodType>).extra = z.string()
    const error = await rejectionOf(catalog.bind({ app: undefined }).invoke({ toolId: 'echo', input: { text: 'a', extra: 'b' } }))
    expect(error.code).toBe('TOOLGATE_INVALID_INPUT')
  })
})

describe('a snapshot behaves like the original', () => {
  it('applies defaults as the original does', () => {
    const copy = snapshotSchema(z.object({ a: z.string().default('d') }))
    expect(copy.parse({})).toEqual({ a: 'd' })
  })

  it('keeps descriptions registered on the original', () => {
    const copy = snapshotSchema(z.object({ a: z.string().describe('the a') }))
    expect(z.toJSONSchema(copy)).toMatchObject({ properties: { a: { description: 'the a' } } })
  })

  it('handles a recursive schema declared with a getter', () => {
    const Node: z.ZodType = z.object({ v: z.number(), get children () { return z.array(Node) } })
    const copy = snapshotSchema(Node)
    expect(copy.safeParse({ v: 1, children: [{ v: 2, children: [] }] }).success).toBe(true)
    expect(copy.safeParse({ v: 1, children: [{ v: 'x', children: [] }] }).success).toBe(false)
  })

  it('keeps a discriminated union discriminating', () => {
    const copy = snapshotSchema(z.discriminatedUnion('t', [z.object({ t: z.literal('a'), x: z.string() }), z.object({ t: z.literal('b') })]))
    expect([copy.safeParse({ t: 'a', x: 's' }).success, copy.safeParse({ t: 'c' }).success]).toEqual([true, false])
  })
})
