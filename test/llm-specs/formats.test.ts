import { describe, expect, it } from 'vitest'
import { z } from 'zod'
import { defineTool, ToolDefinitionError, type AnyTool } from '../../src/index.js'
import { nameMapOf, NAME_RULES, providerNameOf } from '../../src/services/llm-specs/names.js'
import { inputFromStrict } from './from-strict.js'
import { listingOf } from '../../src/services/tool-listing.js'
import { auth, KEYS, testApp } from '../http/helpers.js'
import { mcpTools } from '../mcp/helpers.js'

type Schema = Record<string, unknown>

const Leaf = z.object({ label: z.string().min(2), weight: z.number().int().min(1).max(9).optional() })
/** Optional, nullable, nested, array, enum and default fields: every branch of the strict transform. */
const richTool = defineTool({
  id: 'plan_trip', kind: 'read', description: 'Plan a trip.', isReadOnly: true, isConcurrencySafe: true, authorize () {},
  inputSchema: z.object({
    city: z.string().min(1),
    days: z.number().int().min(1).max(30).optional(),
    mode: z.enum(['train', 'car']).optional(),
    note: z.string().nullable(),
    stops: z.array(Leaf).min(1),
    budget: z.object({ currency: z.string().length(3), max: z.number().optional() }).optional(),
    pace: z.enum(['slow', 'fast']).default('slow'),
  }).strict(),
  outputSchema: z.object({ ok: z.boolean() }),
  execute: () => ({ ok: true }),
})
const tools = [...mcpTools, richTool]

async function specs (query: string): Promise<{ status: number, body: { tools: Array<Record<string, any>> } }> {
  const app = await testApp({}, tools)
  const res = await app.inject({ method: 'GET', url: `/tools?${query}`, headers: auth(KEYS.caller) })
  return { status: res.statusCode, body: res.json() }
}

/** Every object node of a schema, walking properties, items and anyOf. */
function objectsOf (schema: Schema, out: Schema[] = []): Schema[] {
  if (schema.type === 'object' || (Array.isArray(schema.type) && schema.type.includes('object'))) out.push(schema)
  for (const child of Object.values((schema.properties ?? {}) as Record<string, Schema>)) objectsOf(child, out)
  if (typeof schema.items === 'object' && schema.items !== null) objectsOf(schema.items as Schema, out)
  for (const branch of (schema.anyOf ?? []) as Schema[]) objectsOf(branch, out)
  return out
}

/** What a model following the strict schema sends: null wherever null is allowed, else a valid value. */
function argumentsFor (schema: Schema): unknown {
  const types = Array.isArray(schema.type) ? schema.type : [schema.type]
  if (types.includes('null')) return null
  if (Array.isArray(schema.anyOf)) {
    const branches = schema.anyOf as Schema[]
    return branches.some(b => b.type === 'null') ? null : argumentsFor(branches[0]!)
  }
  if (Array.isArray(schema.enum)) return schema.enum[0]
  if (schema.const !== undefined) return schema.const
  switch (types[0]) {
    case 'object': return Object.fromEntries(Object.entries(schema.properties as Record<string, Schema>).map(([k, v]) => [k, argumentsFor(v)]))
    case 'array': return [argumentsFor(schema.items as Schema)]
    case 'string': return 'abc'
    case 'integer': case 'number': return typeof schema.minimum === 'number' ? schema.minimum : 1
    case 'boolean': return true
    default: return 'abc'
  }
}

describe('GET /tools?format=...: the caller\'s tools in each provider\'s request format', () => {
  it('openai: Chat Completions function tools whose names pass OpenAI\'s rule', async () => {
    const { status, body } = await specs('format=openai')
    expect(status).toBe(200)
    expect(body.tools.length).toBeGreaterThan(3)
    for (const spec of body.tools) {
      expect(spec).toMatchObject({ type: 'function', function: { name: expect.stringMatching(NAME_RULES.openai), strict: false } })
      expect(spec.function.parameters.type).toBe('object')
    }
    expect(body.tools.map(spec => spec.function.name)).not.toContain('admin_only') // inactive for this caller
  })

  it('openai strict: every property required, optionals nullable, additionalProperties false everywhere, no $ref', async () => {
    const { body } = await specs('format=openai&strict=true')
    for (const spec of body.tools) {
      const parameters = spec.function.parameters as Schema
      expect(spec.function.strict).toBe(true)
      expect(JSON.stringify(parameters)).not.toContain('$ref')
      for (const node of objectsOf(parameters)) {
        expect(node.additionalProperties).toBe(false)
        expect([...(node.required as string[])].sort()).toEqual(Object.keys(node.properties as Schema).sort())
      }
    }
    const trip = body.tools.find(spec => spec.function.name === 'plan_trip')!.function.parameters
    expect(trip.properties.days.type).toEqual(['integer', 'null'])
    expect(trip.properties.note.type).toEqual(['string', 'null'])
    expect(trip.properties.budget.anyOf ?? trip.properties.budget.type).toBeDefined()
  })

  it('arguments built for the strict schema parse with the tool\'s own zod schema (null means absent)', async () => {
    const { body } = await specs('format=openai-responses&strict=true')
    for (const spec of body.tools) {
      expect(spec).toMatchObject({ type: 'function', name: expect.stringMatching(NAME_RULES['openai-responses']), strict: true })
      const tool = tools.find(t => t.id === spec.name)! as AnyTool
      const args = argumentsFor(spec.parameters as Schema)
      const parsed = (tool.inputSchema as z.ZodType).safeParse(inputFromStrict(listingOf(tool, 120_000).inputSchema, args))
      expect(parsed.success, `${tool.id}: ${JSON.stringify(args)} ${parsed.error?.message ?? ''}`).toBe(true)
    }
    // Without the mapping the nulls of optional fields would be refused: the mapping is what makes it work.
    const trip = body.tools.find(spec => spec.name === 'plan_trip')!
    expect(richTool.inputSchema.safeParse(argumentsFor(trip.parameters as Schema)).success).toBe(false)
  })

  it('anthropic: Messages tools with input_schema, names pass Anthropic\'s rule', async () => {
    const { body } = await specs('format=anthropic')
    for (const spec of body.tools) {
      expect(Object.keys(spec).sort()).toEqual(['description', 'input_schema', 'name'])
      expect(spec.name).toMatch(NAME_RULES.anthropic)
      expect(spec.input_schema.type).toBe('object')
    }
  })

  it('gemini: one Tool with functionDeclarations, names pass Gemini\'s rule', async () => {
    const { body } = await specs('format=gemini')
    expect(body.tools).toHaveLength(1)
    const declarations = body.tools[0]!.functionDeclarations as Array<Record<string, any>>
    for (const declaration of declarations) {
      expect(declaration.name).toMatch(NAME_RULES.gemini)
      expect(declaration.parametersJsonSchema.type).toBe('object')
    }
  })

  it('mcp: the tools/list entries, annotations included', async () => {
    const { body } = await specs('format=mcp')
    expect(body.tools.find(spec => spec.name === 'slow_write')).toMatchObject({ annotations: { destructiveHint: true } })
  })

  it('refuses an unknown format with 400', async () => {
    expect((await specs('format=cohere')).status).toBe(400)
  })

  it('states the effects of a tool that changes state in the model-visible description', async () => {
    const { body } = await specs('format=anthropic')
    expect(body.tools.find(spec => spec.name === 'pay_out')!.description).toContain('Effects: external, financial.')
  })
})

describe('provider names', () => {
  const fake = (id: string): AnyTool => ({ id }) as AnyTool
  it('maps an id a provider refuses and back', () => {
    expect(providerNameOf('gemini', '9lives')).toMatch(NAME_RULES.gemini)
    const map = nameMapOf('openai', [fake('a.b'), fake('plain')])
    expect(map.toName.get('a.b')).toBe('a_b')
    expect(map.toId.get('a_b')).toBe('a.b')
    expect(map.toName.get('plain')).toBe('plain')
  })

  it('stops start-up when two ids map to one name, naming both', () => {
    expect(() => nameMapOf('openai', [fake('a_b'), fake('a.b')])).toThrow(ToolDefinitionError)
    expect(() => nameMapOf('openai', [fake('a_b'), fake('a.b')])).toThrow(/a_b/)
  })
})
