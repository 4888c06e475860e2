import { allowsNull } from '../../src/services/llm-specs/strict-schema.js'

type Schema = Record<string, unknown>

/**
 * Turn arguments a model built for the strict schema back into the tool's own input: a
 * `null` for a property the original schema made optional (and not nullable) means absent.
 * What a caller of the strict specs does with a model's arguments; the tests hold the specs to it.
 */
export function inputFromStrict (original: Schema, value: unknown): unknown {
  const defs = (original.$defs ?? {}) as Record<string, Schema>
  return fromStrict(original, value, defs)
}

function fromStrict (schema: Schema, value: unknown, defs: Record<string, Schema>): unknown {
  if (typeof schema.$ref === 'string') {
    const name = /^#\/\$defs\/(.+)$/.exec(schema.$ref)?.[1]
    return name === undefined || defs[name] === undefined ? value : fromStrict(defs[name], value, defs)
  }
  if (Array.isArray(value)) {
    const items = schema.items
    return typeof items === 'object' && items !== null && !Array.isArray(items) ? value.map(v => fromStrict(items as Schema, v, defs)) : value
  }
  if (typeof value !== 'object' || value === null) return value
  if (Array.isArray(schema.anyOf)) {
    const objectBranch = (schema.anyOf as Schema[]).find(branch => branch.type === 'object' || branch.properties !== undefined || branch.$ref !== undefined)
    return objectBranch === undefined ? value : fromStrict(objectBranch, value, defs)
  }
  const properties = (schema.properties ?? {}) as Record<string, Schema>
  const required = new Set((schema.required ?? []) as string[])
  const out: Record<string, unknown> = {}
  for (const [name, v] of Object.entries(value as Record<string, unknown>)) {
    const property = properties[name]
    if (v === null && property !== undefined && !required.has(name) && !allowsNull(property)) continue
    out[name] = property === undefined ? v : fromStrict(property, v, defs)
  }
  return out
}
