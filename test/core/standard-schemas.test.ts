import * as v from 'valibot'
import { describe, expect, it } from 'vitest'
import { z } from 'zod'
import { defineSchema, defineToolCatalog, ToolDefinitionError, type AnyTool } from '../../src/index.js'
import { defineTool } from '../../src/core/define-tool.js'
import type { ToolDeclaration } from '../../src/core/tool.js'
import { foreignTools } from '../fixtures/foreign-schema-tools.js'
import { echoDeclaration, rejectionOf, type LooseDeclaration } from './helpers.js'

const invoker = defineToolCatalog(foreignTools).bind({ app: undefined })
const invoke = async (toolId: string, input: unknown) => await invoker.invoke({ toolId, input })
const order = { sku: 'abc', lines: [{ qty: 1 }, { qty: 2 }] }
const badOrder = { sku: 'x', lines: [{ qty: 1 }, { qty: 0 }], extra: true }

function definitionError (declaration: LooseDeclaration): ToolDefinitionError {
  try {
    defineTool(declaration as unknown as ToolDeclaration, { source: 'tools/broken.ts' })
  } catch (error) {
    if (error instanceof ToolDefinitionError) return error
    throw error
  }
  throw new Error('defineTool accepted the declaration')
}

describe('tools declared with Valibot, ArkType and defineSchema run through invoke', () => {
  for (const id of ['valibot_order', 'ark_order', 'adapter_order', 'mixed_order']) {
    it(`${id}: valid input reaches execute and the output passes its schema`, async () => {
      expect((await invoke(id, order)).value).toEqual(order)
    })

    it(`${id}: invalid input is a 400 listing every issue with its JSON pointer`, async () => {
      const error = await rejectionOf(invoke(id, badOrder))
      expect([error.status, error.code]).toEqual([400, 'TOOLGATE_INVALID_INPUT'])
      const errors = error.extensions.errors as Array<{ pointer: string, message: string, code: string }>
      // zod reports unknown keys once, at the object that has them; the others at the key.
      const unknownKey = id === 'mixed_order' ? '' : '/extra'
      expect(errors.map(e => e.pointer).sort()).toEqual([unknownKey, '/lines/1/qty', '/sku'].sort())
      for (const issue of errors) expect(issue.message).toMatch(/\S/)
    })
  }

  it('Valibot and ArkType issues keep the vendor\'s own code', async () => {
    const codes = async (id: string) => ((await rejectionOf(invoke(id, { sku: 'x', lines: [] }))).extensions.errors as Array<{ code: string }>).map(e => e.code)
    expect(await codes('valibot_order')).toEqual(['min_length'])
    expect(await codes('ark_order')).toEqual(['minLength'])
  })

  it('the default parseOutput is the output schema\'s validation: bad output is a 502 (mixed tool, adapter output)', async () => {
    const error = await rejectionOf(invoke('mixed_order', { ...order, bad: true }))
    expect([error.status, error.code]).toEqual([502, 'TOOLGATE_INVALID_OUTPUT'])
  })

  it('a defineSchema parse that throws a plain error is one issue at the root', async () => {
    const error = await rejectionOf(invoke('adapter_order', 'not an order'))
    expect(error.extensions.errors).toEqual([{ pointer: '', message: 'an order must be an object', code: 'invalid' }])
  })

  it('a defineSchema parse that throws a zod or Valibot error keeps its paths', async () => {
    const viaZod = defineSchema({ jsonSchema: { type: 'object' }, parse: value => z.object({ a: z.object({ b: z.string() }) }).parse(value) })
    const viaValibot = defineSchema({ jsonSchema: { type: 'object' }, parse: value => v.parse(v.object({ a: v.array(v.string()) }), value) })
    const catalog = defineToolCatalog([
      defineTool({ ...echoDeclaration(), id: 'via_zod', inputSchema: viaZod, outputSchema: z.unknown(), execute: (input: unknown) => input } as unknown as ToolDeclaration),
      defineTool({ ...echoDeclaration(), id: 'via_valibot', inputSchema: viaValibot, outputSchema: z.unknown(), execute: (input: unknown) => input } as unknown as ToolDeclaration),
    ]).bind({ app: undefined })
    const pointers = async (toolId: string, input: unknown) => ((await rejectionOf(catalog.invoke({ toolId, input }))).extensions.errors as Array<{ pointer: string }>).map(e => e.pointer)
    expect(await pointers('via_zod', { a: { b: 1 } })).toEqual(['/a/b'])
    expect(await pointers('via_valibot', { a: ['x', 2] })).toEqual(['/a/1'])
  })

  it('a validator that answers a promise is a tool defect (500), never a pass', async () => {
    const asyncSchema = { '~standard': { version: 1, vendor: 'x', validate: async (value: unknown) => ({ value }), jsonSchema: { input: () => ({}), output: () => ({}) } } }
    const catalog = defineToolCatalog([defineTool({ ...echoDeclaration(), inputSchema: asyncSchema } as unknown as ToolDeclaration)]).bind({ app: undefined })
    const error = await rejectionOf(catalog.invoke({ toolId: 'echo', input: { text: 'a' } }))
    expect([error.status, error.code]).toEqual([500, 'TOOLGATE_TOOL_BAD_DEFINITION'])
  })
})

describe('a schema that cannot give a JSON Schema is refused at definition, naming tool, file and field', () => {
  const refused = (field: 'inputSchema' | 'outputSchema', schema: unknown, problem: RegExp) => {
    const error = definitionError(echoDeclaration({ [field]: schema }))
    expect(error.message).toContain('echo')
    expect(error.message).toContain('tools/broken.ts')
    expect(error.message).toContain(field)
    expect(error.message).toMatch(problem)
  }

  it('a bare Valibot schema (Standard Schema without Standard JSON Schema), with the converter named', () => {
    refused('inputSchema', v.object({ a: v.string() }), /JSON Schema.*toStandardJsonSchema/)
  })

  it('a converter that throws', () => {
    const schema = { '~standard': { version: 1, vendor: 'x', validate: (value: unknown) => ({ value }), jsonSchema: { input: () => { throw new Error('no way') }, output: () => ({}) } } }
    refused('outputSchema', schema, /cannot give a JSON Schema \(input\): no way/)
  })

  it('defineSchema without a jsonSchema, and without a parse', () => {
    refused('inputSchema', defineSchema({ parse: (value: unknown) => value } as never), /needs a jsonSchema/)
    refused('outputSchema', defineSchema({ jsonSchema: { type: 'object' } } as never), /without a parse function/)
  })

  it('a JSON Schema that is not valid JSON Schema', () => {
    refused('inputSchema', defineSchema({ jsonSchema: { type: 'strnig' }, parse: value => value }), /not valid JSON Schema/)
  })

  it('a ~standard getter that throws', () => {
    refused('inputSchema', { get '~standard' () { throw new Error('boom') } }, /could not be read: boom/)
  })

  it('something that is no schema at all', () => {
    refused('inputSchema', { parse: () => 1 }, /must be a zod schema, a Standard Schema/)
  })
})

describe('jsonSchemaOf: one JSON Schema per tool, whatever the kind', () => {
  it('gives the same JSON Schema for the Valibot, ArkType and defineSchema versions of one order', async () => {
    const { jsonSchemaOf } = await import('../../src/services/tool-listing.js')
    const schemas = foreignTools.slice(0, 3).map((tool: AnyTool) => jsonSchemaOf(tool.inputSchema, 'input'))
    for (const schema of schemas) {
      expect(schema).toMatchObject({ type: 'object', additionalProperties: false, properties: { sku: { type: 'string', minLength: 3 }, lines: { type: 'array' } } })
      expect([...schema.required as string[]].sort()).toEqual(['lines', 'sku'])
      expect(schema.$schema).toBeUndefined()
    }
  })
})
