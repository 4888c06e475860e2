import { z } from 'zod'
import { GatewayError, type InputIssue } from './errors.js'
import { fromStandardIssue, toInputIssues } from './input-issues.js'
import { isThenable } from './thenable.js'
import { problemOfAdapter } from './schema-adapter.js'
import { guarded } from './schema-guard.js'
import { snapshotSchema } from './schema-snapshot.js'
import type { StandardSchemaV1, StandardSchemaWithJSON, StandardTypedV1 } from './standard-schema.js'

/*
 * The one schema abstraction of the core. A tool's `inputSchema` and `outputSchema` may be zod
 * (the fast path, unchanged), any Standard Schema that also implements Standard JSON Schema
 * (zod 4.2+, ArkType, Valibot through its converter), or `defineSchema({ jsonSchema, parse })`,
 * which is such a Standard Schema. Everything else in toolgate (input parsing, the default
 * parseOutput, listings, OpenAPI, exports) goes through the functions below.
 */

/** What `inputSchema` and `outputSchema` accept. */
export type ToolSchema = z.ZodType | StandardSchemaWithJSON

/** The value a schema produces (what `execute` receives for an input schema). zod first: its own types are exact. */
export type SchemaOutput<S> = S extends z.ZodType ? z.output<S> : S extends StandardTypedV1 ? StandardTypedV1.InferOutput<S> : unknown
/** The value a schema accepts (what `execute` may return for an output schema). */
export type SchemaInput<S> = S extends z.ZodType ? z.input<S> : S extends StandardTypedV1 ? StandardTypedV1.InferInput<S> : unknown

/** What a defined tool holds: the zod copy, or a frozen Standard Schema over the captured validator and JSON Schemas. */
export type SchemaSnapshot<S> = S extends z.ZodType ? S : StandardSchemaWithJSON<SchemaInput<S>, SchemaOutput<S>>

export type JsonSchema = Record<string, unknown>
export type SchemaIo = 'input' | 'output'

/** One validation: the value, or every issue with its JSON pointer. */
export type Parsed = { readonly ok: true, readonly value: unknown } | { readonly ok: false, readonly issues: readonly InputIssue[] }

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
const TARGET = 'draft-2020-12'

export function isZodSchema (value: unknown): value is z.ZodType {
  return (typeof value === 'object' || typeof value === 'function') && value !== null && '_zod' in value && typeof (value as { safeParse?: unknown }).safeParse === 'function'
}

/**
 * The define-time snapshot of a declared schema: zod is deep-copied; anything else has its
 * validator captured (bound, read once) and both JSON Schemas generated, copied and frozen,
 * so later mutation of the object, its JSON Schema or its validator changes nothing. A schema
 * that cannot give a JSON Schema is refused through `fail`.
 */
export function snapshotToolSchema<S> (schema: S, fail: (problem: string) => never): S {
  if (isZodSchema(schema)) return snapshotSchema(schema)
  const props = standardPropsOf(schema)
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

/** Validate with a non-zod schema. A validator that answers a promise or throws is a tool defect. */
export function parseStandard (schema: StandardSchemaWithJSON, value: unknown): Parsed {
  const validate = captures.get(schema)?.validate ?? schema['~standard'].validate
  let result: unknown
  try {
    result = validate(value)
  } catch (thrown) {
    throw new GatewayError('TOOLGATE_TOOL_BAD_DEFINITION', 'a schema validator threw instead of answering issues', {}, { cause: thrown })
  }
  if (isThenable(result)) throw new GatewayError('TOOLGATE_TOOL_BAD_DEFINITION', 'a schema validator answered a promise; tool schemas must validate synchronously')
  const { issues } = result as { issues?: ReadonlyArray<StandardSchemaV1.Issue> }
  if (issues === undefined || issues === null) return { ok: true, value: (result as { value: unknown }).value }
  return { ok: false, issues: Array.from(issues, fromStandardIssue) }
}

/** Any schema: zod's issues or the Standard Schema issues, each with its JSON pointer. */
export function parseWith (schema: ToolSchema, value: unknown): Parsed {
  if (!isZodSchema(schema)) return parseStandard(schema, value)
  const parsed = schema.safeParse(value)
  return parsed.success ? { ok: true, value: parsed.data } : { ok: false, issues: toInputIssues(parsed.error) }
}

/** The default `parseOutput`: the output schema's validation, throwing on any issue. */
export function outputParserOf (schema: ToolSchema): (value: unknown) => unknown {
  if (isZodSchema(schema)) return value => schema.parse(value)
  return value => {
    const parsed = parseStandard(schema, value)
    if (!parsed.ok) throw new Error(`output does not match its schema: ${parsed.issues.map(i => `${i.pointer || '/'} ${i.message}`).join('; ')}`)
    return parsed.value
  }
}

/**
 * The JSON Schema (2020-12, without `$schema`) of what a schema accepts (`input`) or produces
 * (`output`): zod's own conversion, or the copy captured at define time.
 */
export function toJsonSchema (schema: ToolSchema, io: SchemaIo): JsonSchema {
  if (isZodSchema(schema)) {
    const json = z.toJSONSchema(schema, { io, unrepresentable: 'any' }) as JsonSchema
    delete json.$schema
    return json
  }
  const captured = captures.get(schema)
  if (captured !== undefined) return structuredClone(captured[io])
  const json = { ...schema['~standard'].jsonSchema[io]({ target: TARGET }) }
  delete json.$schema
  return json
}
