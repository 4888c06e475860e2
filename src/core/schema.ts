import { z } from 'zod'
import { GatewayError, type InputIssue } from './errors.js'
import { fromStandardIssue } from './input-issues.js'
import type { JsonSchema, SchemaIo } from './json-schema.js'
import { isThenable } from './thenable.js'
import { capturedOf, captureStandard, TARGET } from './schema-capture.js'
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

/** One validation: the value, or every issue with its JSON pointer. */
export type Parsed = { readonly ok: true, readonly value: unknown } | { readonly ok: false, readonly issues: readonly InputIssue[] }

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
  return isZodSchema(schema) ? snapshotSchema(schema) : captureStandard(schema, fail)
}

/** Validate with a non-zod schema. A validator that answers a promise or throws is a tool defect. */
export function parseStandard (schema: StandardSchemaWithJSON, value: unknown): Parsed {
  const validate = capturedOf(schema)?.validate ?? schema['~standard'].validate
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
  const captured = capturedOf(schema)
  if (captured !== undefined) return structuredClone(captured[io])
  const json = { ...schema['~standard'].jsonSchema[io]({ target: TARGET }) }
  delete json.$schema
  return json
}
