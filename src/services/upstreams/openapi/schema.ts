import { isObject, pointerIn, type Json } from './document.js'

/*
 * OpenAPI Schema Objects as the JSON Schema (2020-12) a tool declares. 3.1 schemas are JSON
 * Schema already; 3.0 ones differ in `nullable` and the boolean `exclusiveMinimum` /
 * `exclusiveMaximum`. Keywords that only document (`example`, `xml`, `externalDocs`,
 * `discriminator`, `x-*`) are dropped. A `$ref` into the document becomes a `$ref` into the
 * tool schema's own `$defs`, each referenced schema converted once: recursive schemas stay
 * finite, shared components are written once per tool.
 */

/** Keywords whose value is one schema. */
const ONE = ['items', 'additionalProperties', 'not', 'contains', 'if', 'then', 'else', 'propertyNames', 'unevaluatedItems', 'unevaluatedProperties', 'additionalItems', 'contentSchema']
/** Keywords whose value is a list of schemas. */
const LIST = ['allOf', 'anyOf', 'oneOf', 'prefixItems']
/** Keywords whose value maps names to schemas. */
const MAP = ['properties', 'patternProperties', 'dependentSchemas', '$defs', 'definitions']
/** OpenAPI-only keywords that say nothing a validator checks. */
const DROP = new Set(['example', 'xml', 'externalDocs', 'discriminator', 'nullable', '$schema', '$id', '$anchor', '$dynamicAnchor', '$dynamicRef'])

export class SchemaConverter {
  readonly #root: Json
  readonly #dialect: '3.0' | '3.1'
  readonly #defs: Record<string, unknown> = {}
  /** Document pointer to its name in `$defs`. */
  readonly #names = new Map<string, string>()

  constructor (root: Json, dialect: '3.0' | '3.1') {
    this.#root = root
    this.#dialect = dialect
  }

  /** Every schema a converted one refers to, by name: the tool schema's `$defs`. */
  get defs (): Readonly<Record<string, unknown>> {
    return this.#defs
  }

  convert (schema: unknown): unknown {
    if (typeof schema === 'boolean') return schema
    if (!isObject(schema)) return {}
    if (typeof schema.$ref === 'string') {
      const ref = this.#ref(schema.$ref)
      // 3.1 allows siblings beside `$ref` (a description); 3.0 ignores them.
      if (this.#dialect === '3.0') return ref
      const rest = this.#keywords(Object.fromEntries(Object.entries(schema).filter(([key]) => key !== '$ref')))
      return Object.keys(rest).length === 0 ? ref : { ...rest, ...ref }
    }
    return this.#keywords(schema)
  }

  #keywords (schema: Json): Json {
    const out: Json = {}
    for (const [key, value] of Object.entries(schema)) {
      if (DROP.has(key) || key.startsWith('x-')) continue
      if (ONE.includes(key)) out[key] = Array.isArray(value) ? value.map(v => this.convert(v)) : this.convert(value)
      else if (LIST.includes(key) && Array.isArray(value)) out[key] = value.map(v => this.convert(v))
      else if (MAP.includes(key) && isObject(value)) {
        // Nested `$defs` of a 3.1 schema would point at the wrong root once moved: inline them as named entries of ours.
        if (key === '$defs' || key === 'definitions') continue
        out[key] = Object.fromEntries(Object.entries(value).map(([name, v]) => [name, this.convert(v)]))
      } else if (key === 'dependencies' && isObject(value)) {
        out.dependentRequired = Object.fromEntries(Object.entries(value).filter(([, v]) => Array.isArray(v)))
      } else if (key === 'examples' && !Array.isArray(value)) continue
      else out[key] = value
    }
    if (this.#dialect === '3.0') threeZero(schema, out)
    return out
  }

  #ref (ref: string): Json {
    const known = this.#names.get(ref)
    if (known !== undefined) return { $ref: `#/$defs/${known}` }
    const target = pointerIn(this.#root, ref)
    // A reference the bundler could not resolve: accept anything rather than invent a shape.
    if (target === undefined) return {}
    const name = this.#nameFor(ref)
    this.#names.set(ref, name)
    this.#defs[name] = true
    this.#defs[name] = this.convert(target)
    return { $ref: `#/$defs/${name}` }
  }

  #nameFor (ref: string): string {
    const component = /^#\/components\/schemas\/([^/]+)$/.exec(ref)?.[1]
    const base = (component === undefined ? ref.slice(2) : decodeURIComponent(component).replaceAll('~1', '/').replaceAll('~0', '~')).replace(/[^A-Za-z0-9._-]/g, '_').slice(0, 100) || 'schema'
    let name = base
    for (let i = 2; Object.hasOwn(this.#defs, name); i++) name = `${base}_${i}`
    return name
  }
}

/** 3.0's own spellings, as JSON Schema: `nullable`, boolean exclusive bounds. */
function threeZero (schema: Json, out: Json): void {
  for (const [flag, bound] of [['exclusiveMinimum', 'minimum'], ['exclusiveMaximum', 'maximum']] as const) {
    if (typeof schema[flag] !== 'boolean') continue
    delete out[flag]
    if (schema[flag] === true && typeof schema[bound] === 'number') {
      out[flag] = schema[bound]
      delete out[bound]
    }
  }
  if (schema.nullable !== true) return
  if (typeof out.type === 'string') out.type = [out.type, 'null']
  else if (Array.isArray(out.type) && !out.type.includes('null')) out.type = [...(out.type as unknown[]), 'null']
  if (Array.isArray(out.enum) && !out.enum.includes(null)) out.enum = [...(out.enum as unknown[]), null]
  if (out.type === undefined && (out.allOf !== undefined || out.anyOf !== undefined || out.oneOf !== undefined)) {
    const rest = { ...out }
    for (const key of Object.keys(out)) delete out[key]
    out.anyOf = [rest, { type: 'null' }]
  }
}
