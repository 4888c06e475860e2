import { toStandardJsonSchema } from '@valibot/to-json-schema'
import { type } from 'arktype'
import * as v from 'valibot'
import { describe, expect, it } from 'vitest'
import { defineSchema, defineToolCatalog, type AnyTool, type StandardSchemaWithJSON } from '../../src/index.js'
import { defineTool } from '../../src/core/define-tool.js'
import type { ToolDeclaration } from '../../src/core/tool.js'
import { jsonSchemaOf } from '../../src/services/tool-listing.js'
import { echoDeclaration } from './helpers.js'

/*
 * The non-zod kinds get zod's guarantee: mutating what was declared after defineTool cannot
 * widen what the tool accepts, nor change the JSON Schema it shows. Each test widens the
 * original first (checked, so a no-op mutation cannot pass) and then calls the tool.
 */

function toolWith (inputSchema: unknown): AnyTool {
  return defineTool(echoDeclaration({ inputSchema, outputSchema: defineSchema({ jsonSchema: {}, parse: value => value }), execute: (input: unknown) => input }) as unknown as ToolDeclaration)
}

async function accepts (tool: AnyTool, input: unknown): Promise<boolean> {
  const invoker = defineToolCatalog([tool]).bind({ app: undefined })
  return await invoker.invoke({ toolId: tool.id, input }).then(() => true, () => false)
}

const validate = (schema: StandardSchemaWithJSON, value: unknown) => schema['~standard'].validate(value) as { issues?: unknown }

describe('defineSchema: the adapter object is read once', () => {
  it('ignores a parse swapped on the adapter object afterwards', async () => {
    const adapter = { jsonSchema: { type: 'string' }, parse (value: unknown) { if (typeof value !== 'string') throw new Error('a string'); return value } }
    const tool = toolWith(defineSchema(adapter))
    adapter.parse = (value: unknown) => value as string
    expect(adapter.parse(1 as never)).toBe(1)
    expect(await accepts(tool, 1)).toBe(false)
    expect(await accepts(tool, 'a')).toBe(true)
  })

  it('ignores a mutated jsonSchema object: listing and OpenAPI keep what was declared', () => {
    const adapter = { jsonSchema: { type: 'object', properties: { a: { type: 'string' } }, additionalProperties: false as boolean }, parse: (value: unknown) => value }
    const tool = toolWith(defineSchema(adapter))
    adapter.jsonSchema.additionalProperties = true
    adapter.jsonSchema.properties.a.type = 'number'
    expect(jsonSchemaOf(tool.inputSchema, 'input')).toEqual({ type: 'object', properties: { a: { type: 'string' } }, additionalProperties: false })
  })
})

describe('a Standard Schema: validator and JSON Schema are captured at definition', () => {
  it('ignores a validate function swapped on ~standard afterwards (Valibot)', async () => {
    const schema = toStandardJsonSchema(v.strictObject({ a: v.string() }))
    const tool = toolWith(schema)
    ;(schema['~standard'] as { validate: unknown }).validate = (value: unknown) => ({ value })
    expect(validate(schema, { a: 1 }).issues).toBeUndefined()
    expect(await accepts(tool, { a: 1 })).toBe(false)
    expect(await accepts(tool, { a: 'x' })).toBe(true)
  })

  it('ignores a whole ~standard replaced afterwards', async () => {
    const schema = toStandardJsonSchema(v.strictObject({ a: v.string() })) as { '~standard': unknown }
    const tool = toolWith(schema)
    schema['~standard'] = { version: 1, vendor: 'evil', validate: (value: unknown) => ({ value }), jsonSchema: { input: () => ({}), output: () => ({}) } }
    expect(await accepts(tool, { b: 2 })).toBe(false)
    expect(jsonSchemaOf(tool.inputSchema, 'input')).toMatchObject({ additionalProperties: false, required: ['a'] })
  })

  it('ignores mutation of a JSON Schema object the converter handed out and kept', () => {
    const kept: Record<string, unknown> = { type: 'object', properties: { a: { type: 'string' } }, required: ['a'] }
    const schema = { '~standard': { version: 1, vendor: 'hand', validate: (value: unknown) => ({ value }), jsonSchema: { input: () => kept, output: () => kept } } }
    const tool = toolWith(schema)
    ;(kept.required as string[]).pop()
    kept.properties = {}
    expect(jsonSchemaOf(tool.inputSchema, 'input')).toEqual({ type: 'object', properties: { a: { type: 'string' } }, required: ['a'] })
  })

  it('hands out copies: mutating one JSON Schema it gave changes the next one not', () => {
    const tool = toolWith(type({ a: 'string' }))
    const first = jsonSchemaOf(tool.inputSchema, 'input')
    ;(first.properties as Record<string, unknown>).b = { type: 'number' }
    const fromStandard = (tool.inputSchema as StandardSchemaWithJSON)['~standard'].jsonSchema.input({ target: 'draft-2020-12' })
    fromStandard.type = 'array'
    expect(jsonSchemaOf(tool.inputSchema, 'input')).toEqual({ type: 'object', properties: { a: { type: 'string' } }, required: ['a'] })
  })

  it('the tool\'s schema is frozen: its validator cannot be reassigned', () => {
    const tool = toolWith(type({ a: 'string' }))
    const standard = (tool.inputSchema as StandardSchemaWithJSON)['~standard']
    expect(Object.isFrozen(tool.inputSchema) && Object.isFrozen(standard) && Object.isFrozen(standard.jsonSchema)).toBe(true)
    expect(() => { (standard as { validate: unknown }).validate = () => ({ value: 1 }) }).toThrow(TypeError)
  })
})

describe('the frozen JSON Schema is enforced too: a library\'s own objects, mutated later, cannot widen the tool', () => {
  it('a key added to a Valibot strict object\'s entries', async () => {
    const inner = v.strictObject({ a: v.string() })
    const tool = toolWith(toStandardJsonSchema(inner))
    ;(inner.entries as Record<string, unknown>).extra = v.optional(v.string())
    expect((inner['~standard'].validate({ a: 'x', extra: 'y' }) as { issues?: unknown }).issues).toBeUndefined()
    expect(await accepts(tool, { a: 'x', extra: 'y' })).toBe(false)
    expect(await accepts(tool, { a: 'x' })).toBe(true)
  })

  it('an ArkType node\'s compiled checks replaced', async () => {
    const strict = type({ a: 'string', '+': 'reject' })
    const tool = toolWith(strict)
    const node = (strict as unknown as { internal: Record<string, unknown> }).internal
    node.traverse = () => true
    node.allows = () => true
    expect(validate(strict as StandardSchemaWithJSON, { a: 'x', b: 1 }).issues).toBeUndefined()
    expect(await accepts(tool, { a: 'x', b: 1 })).toBe(false)
    expect(await accepts(tool, { a: 'x' })).toBe(true)
  })

  it('reports what the JSON Schema refused with a pointer at the key', async () => {
    const inner = v.strictObject({ a: v.string() })
    const tool = toolWith(toStandardJsonSchema(inner))
    ;(inner.entries as Record<string, unknown>).extra = v.optional(v.string())
    const error = await defineToolCatalog([tool]).bind({ app: undefined }).invoke({ toolId: tool.id, input: { a: 'x', extra: 'y' } }).catch((e: unknown) => e as { extensions: { errors: unknown } })
    expect((error as { extensions: { errors: unknown } }).extensions.errors).toEqual([{ pointer: '/extra', message: 'must NOT have additional properties', code: 'additionalProperties' }])
  })

  it('a defineSchema whose parse is looser than its JSON Schema accepts only what the JSON Schema says', async () => {
    const tool = toolWith(defineSchema({ jsonSchema: { type: 'object', properties: { n: { type: 'integer' } } }, parse: value => value }))
    expect(await accepts(tool, { n: 1.5 })).toBe(false)
    expect(await accepts(tool, { n: 2 })).toBe(true)
  })
})

