import { problemOfAdapter } from './schema-adapter.js'
import { guarded } from './schema-guard.js'
import type { JsonSchema, SchemaIo } from './json-schema.js'
import type { StandardSchemaV1, StandardSchemaWithJSON } from './standard-schema.js'

/*
 * The define-time snapshot of a non-zod schema (a Standard Schema with Standard JSON Schema,
 * `defineSchema` among them): its validator read once and bound, both JSON Schemas generated,
 * copied and frozen, all behind a frozen Standard Schema of toolgate's own.
 */

/** What `defineTool` took from a non-zod schema: the validator (guarded by the input JSON Schema) and both JSON Schemas, frozen copies. */
interface Captured {
  readonly validate: (value: unknown) => unknown
  readonly input: JsonSchema
  readonly output: JsonSchema
}

const captures = new WeakMap<object, Captured>()
const HINTS: Record<string, string> = {
  valibot: '; wrap it with toStandardJsonSchema from @valibot/to-json-schema',
  zod: '; use zod 4.2 or later',
}
export const TARGET = 'draft-2020-12'

/** The parts captured for a tool's schema (undefined for a schema `defineTool` did not snapshot). */
export function capturedOf (schema: object): Captured | undefined {
  return captures.get(schema)
}

/** Capture a non-zod schema, or refuse it through `fail` when it cannot give a JSON Schema. */
export function captureStandard<S> (schema: S, fail: (problem: string) => never): S {
  let props: ReturnType<typeof standardPropsOf>
  try {
    props = standardPropsOf(schema)
  } catch (thrown) {
    // A hostile or broken `~standard` getter: a definition error, not a crash of the loader.
    return fail(`could not be read: ${thrown instanceof Error ? thrown.message : String(thrown)}`)
  }
  if (props === undefined) {
    return fail('must be a zod schema, a Standard Schema that implements Standard JSON Schema (ArkType; Valibot through toStandardJsonSchema), or defineSchema({ jsonSchema, parse })')
  }
  const problem = problemOfAdapter(schema as object)
  if (problem !== undefined) return fail(problem)
  if (typeof props.validate !== 'function') return fail(`is a ${props.vendor} schema without a Standard Schema validate function`)
  if (typeof props.jsonSchema?.input !== 'function' || typeof props.jsonSchema.output !== 'function') {
    return fail(`cannot give a JSON Schema: this ${props.vendor} schema does not implement Standard JSON Schema (~standard.jsonSchema)${HINTS[props.vendor] ?? ''}`)
  }
  if ((schema as { async?: unknown }).async === true) return fail('is asynchronous; tool schemas must validate synchronously')
  const converter = props.jsonSchema
  const generate = (io: SchemaIo): JsonSchema => {
    try {
      return frozenJson(converter[io].call(converter, { target: TARGET }))
    } catch (thrown) {
      return fail(`cannot give a JSON Schema (${io}): ${thrown instanceof Error ? thrown.message : String(thrown)}`)
    }
  }
  const input = generate('input')
  let validate: (value: unknown) => unknown
  try {
    validate = guarded(props.validate.bind(props), input)
  } catch (thrown) {
    return fail(`gave a JSON Schema that is not valid JSON Schema: ${thrown instanceof Error ? thrown.message : String(thrown)}`)
  }
  return capture(props.vendor, validate, input, generate('output')) as S
}

function standardPropsOf (schema: unknown): (StandardSchemaV1.Props & { jsonSchema?: { input?: unknown, output?: unknown } & Record<SchemaIo, (options: object) => unknown> }) | undefined {
  if ((typeof schema !== 'object' && typeof schema !== 'function') || schema === null) return undefined
  const props = (schema as { '~standard'?: unknown })['~standard']
  if (typeof props !== 'object' || props === null || (props as { version?: unknown }).version !== 1) return undefined
  return props as ReturnType<typeof standardPropsOf>
}

/** A frozen Standard Schema over the captured parts: what `tool.inputSchema` is for non-zod kinds. */
function capture (vendor: string, validate: (value: unknown) => unknown, input: JsonSchema, output: JsonSchema): StandardSchemaWithJSON {
  const converter = (json: JsonSchema) => (options: { target: string }): JsonSchema => {
    if (options?.target !== TARGET) throw new Error(`toolgate keeps the ${TARGET} JSON Schema of a tool only, not ${String(options?.target)}`)
    return structuredClone(json)
  }
  const snapshot = Object.freeze({
    '~standard': Object.freeze({ version: 1 as const, vendor, validate, jsonSchema: Object.freeze({ input: converter(input), output: converter(output) }) }),
  }) as StandardSchemaWithJSON
  captures.set(snapshot, { validate, input, output })
  return snapshot
}

/** A deep, JSON-only, frozen copy: nothing the author keeps a reference to can change it. */
function frozenJson (value: unknown): JsonSchema {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) throw new Error('the converter did not return a JSON Schema object')
  const copy = JSON.parse(JSON.stringify(value)) as JsonSchema
  delete copy.$schema
  return deepFreeze(copy)
}

function deepFreeze<T> (value: T): T {
  if (typeof value === 'object' && value !== null) {
    for (const child of Object.values(value)) deepFreeze(child)
    Object.freeze(value)
  }
  return value
}

