/*
 * OpenAI strict-mode function schemas (Structured Outputs): every object closes with
 * `additionalProperties: false` and lists every property in `required`; a property that was
 * optional becomes nullable instead, and the model sends `null` for "absent". No `$ref`: the
 * `$defs` are inlined. Keywords outside strict mode's subset are dropped: the tool's own zod
 * schema still enforces them when the call arrives.
 */

type Schema = Record<string, unknown>

/** Keywords strict mode accepts (OpenAI Structured Outputs, "Supported schemas"). */
const KEPT = new Set([
  'type', 'properties', 'required', 'additionalProperties', 'items', 'enum', 'const', 'anyOf', 'description',
  'pattern', 'format', 'multipleOf', 'maximum', 'exclusiveMaximum', 'minimum', 'exclusiveMinimum', 'minItems', 'maxItems',
])

/** Why a schema has no strict form (it is then offered with `strict: false`). */
export class NotStrictable extends Error {}

/** The strict form of a JSON Schema whose root is an object; throws `NotStrictable` otherwise. */
export function strictSchemaOf (schema: Schema): Schema {
  const defs = (schema.$defs ?? {}) as Record<string, Schema>
  const strict = convert(schema, defs, new Set())
  if (strict.type !== 'object') throw new NotStrictable('the input schema is not an object')
  return strict
}

function convert (schema: Schema, defs: Record<string, Schema>, seen: ReadonlySet<string>): Schema {
  if (typeof schema.$ref === 'string') {
    const name = /^#\/\$defs\/(.+)$/.exec(schema.$ref)?.[1]
    if (name === undefined || defs[name] === undefined) throw new NotStrictable(`unresolvable $ref ${schema.$ref}`)
    if (seen.has(name)) throw new NotStrictable(`recursive schema ${name}`)
    return convert(defs[name], defs, new Set([...seen, name]))
  }
  if ('allOf' in schema || 'not' in schema || 'if' in schema) throw new NotStrictable('allOf, not and if have no strict form')
  const out: Schema = {}
  for (const [key, value] of Object.entries(schema)) if (KEPT.has(key)) out[key] = value
  if ('oneOf' in schema) out.anyOf = schema.oneOf
  if (Array.isArray(out.anyOf)) out.anyOf = (out.anyOf as Schema[]).map(branch => convert(branch, defs, seen))
  if (out.items !== undefined && typeof out.items === 'object' && !Array.isArray(out.items)) out.items = convert(out.items as Schema, defs, seen)
  if (schema.type === 'object' || schema.properties !== undefined) {
    const properties = (schema.properties ?? {}) as Record<string, Schema>
    const required = new Set((schema.required ?? []) as string[])
    const strictProperties: Record<string, Schema> = {}
    for (const [name, property] of Object.entries(properties)) {
      const converted = convert(property, defs, seen)
      strictProperties[name] = required.has(name) ? converted : nullable(converted)
    }
    out.type = 'object'
    out.properties = strictProperties
    out.required = Object.keys(properties)
    out.additionalProperties = false
  }
  return out
}

function nullable (schema: Schema): Schema {
  if (allowsNull(schema)) return schema
  if (typeof schema.type === 'string' && schema.enum === undefined && schema.const === undefined) return { ...schema, type: [schema.type, 'null'] }
  const { description, ...rest } = schema
  return { ...(description === undefined ? {} : { description }), anyOf: [rest, { type: 'null' }] }
}

/** @internal exported for its tests, not for the package */
export function allowsNull (schema: Schema): boolean {
  const type = schema.type
  if (type === 'null' || (Array.isArray(type) && type.includes('null'))) return true
  return Array.isArray(schema.anyOf) && (schema.anyOf as Schema[]).some(allowsNull)
}
