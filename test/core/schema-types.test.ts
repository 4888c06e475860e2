import { toStandardJsonSchema } from '@valibot/to-json-schema'
import { type } from 'arktype'
import * as v from 'valibot'
import { describe, expectTypeOf, it } from 'vitest'
import { z } from 'zod'
import { defineSchema, defineTool, type SchemaOutput, type StandardSchemaWithJSON } from '../../src/index.js'

/*
 * Type tests, checked by `tsc --noEmit` (the test folder is part of the project): a tool
 * author gets input and output types inferred from any kind of schema, with no type arguments.
 * Each `@ts-expect-error` proves a wrong type is refused, so the inference is not `any`.
 */

const base = { kind: 'read', description: 'Types.', isReadOnly: true, isConcurrencySafe: true, authorize () {} } as const

describe('defineTool infers input and output types from every kind of schema', () => {
  it('zod, as before', () => {
    const tool = defineTool({
      ...base, id: 'zod_types',
      inputSchema: z.object({ n: z.string().transform(Number) }),
      outputSchema: z.object({ doubled: z.number() }),
      execute: input => {
        expectTypeOf(input).toEqualTypeOf<{ n: number }>()
        return { doubled: input.n * 2 }
      },
    })
    expectTypeOf(tool.parseOutput).returns.toEqualTypeOf<{ doubled: number }>()
    expectTypeOf(tool.outputSchema).toEqualTypeOf<z.ZodObject<{ doubled: z.ZodNumber }, z.core.$strip>>()
    // @ts-expect-error the output schema wants a number
    defineTool({ ...base, id: 'zod_bad', inputSchema: z.object({}), outputSchema: z.object({ doubled: z.number() }), execute: () => ({ doubled: 'two' }) })
  })

  it('Valibot through toStandardJsonSchema', () => {
    const tool = defineTool({
      ...base, id: 'valibot_types',
      inputSchema: toStandardJsonSchema(v.object({ tags: v.array(v.string()), limit: v.optional(v.number()) })),
      outputSchema: toStandardJsonSchema(v.object({ count: v.number() })),
      execute: input => {
        expectTypeOf(input).toEqualTypeOf<{ tags: string[], limit?: number | undefined }>()
        return { count: input.tags.length }
      },
    })
    expectTypeOf(tool.parseOutput).returns.toEqualTypeOf<{ count: number }>()
    // @ts-expect-error count must be a number
    defineTool({ ...base, id: 'valibot_bad', inputSchema: toStandardJsonSchema(v.object({})), outputSchema: toStandardJsonSchema(v.object({ count: v.number() })), execute: () => ({ count: '1' }) })
  })

  it('ArkType', () => {
    const tool = defineTool({
      ...base, id: 'ark_types',
      inputSchema: type({ name: 'string', 'age?': 'number' }),
      outputSchema: type({ greeting: 'string' }),
      execute: input => {
        expectTypeOf(input).toEqualTypeOf<{ name: string, age?: number }>()
        return { greeting: `hello ${input.name}` }
      },
    })
    expectTypeOf(tool.parseOutput).returns.toEqualTypeOf<{ greeting: string }>()
    // The defined tool holds a frozen Standard Schema, not the ArkType object: its type says so.
    expectTypeOf(tool.inputSchema).toEqualTypeOf<StandardSchemaWithJSON<{ name: string, age?: number }, { name: string, age?: number }>>()
    // @ts-expect-error greeting must be a string
    defineTool({ ...base, id: 'ark_bad', inputSchema: type({}), outputSchema: type({ greeting: 'string' }), execute: () => ({ greeting: 1 }) })
  })

  it('defineSchema<T>, and mixed with zod in one tool', () => {
    const Point = defineSchema<{ x: number, y: number }>({ jsonSchema: { type: 'object' }, parse: value => value as { x: number, y: number } })
    expectTypeOf<SchemaOutput<typeof Point>>().toEqualTypeOf<{ x: number, y: number }>()
    const tool = defineTool({
      ...base, id: 'mixed_types',
      inputSchema: Point,
      outputSchema: z.object({ length: z.number() }),
      authorize: input => { expectTypeOf(input).toEqualTypeOf<{ x: number, y: number }>() },
      execute: ({ x, y }) => ({ length: Math.hypot(x, y) }),
    })
    expectTypeOf(tool.parseOutput).returns.toEqualTypeOf<{ length: number }>()
    // @ts-expect-error the adapter's T has no z
    defineTool({ ...base, id: 'point_bad', inputSchema: Point, outputSchema: z.unknown(), execute: input => input.z })
  })
})
