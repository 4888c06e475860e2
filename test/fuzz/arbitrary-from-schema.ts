import fc from 'fast-check'

/** The subset of JSON Schema 2020-12 that zod's `toJSONSchema` emits for the shipped tools (and a little more). */
export interface JsonSchema {
  readonly type?: string | readonly string[]
  readonly properties?: Readonly<Record<string, JsonSchema>>
  readonly required?: readonly string[]
  readonly additionalProperties?: boolean | JsonSchema
  readonly items?: JsonSchema
  readonly minItems?: number
  readonly maxItems?: number
  readonly minLength?: number
  readonly maxLength?: number
  readonly pattern?: string
  readonly format?: string
  readonly minimum?: number
  readonly maximum?: number
  readonly exclusiveMinimum?: number
  readonly exclusiveMaximum?: number
  readonly enum?: readonly unknown[]
  readonly const?: unknown
  readonly anyOf?: readonly JsonSchema[]
  readonly oneOf?: readonly JsonSchema[]
  readonly default?: unknown
}

export interface FromSchemaOptions {
  /**
   * Extra values for a property, by JSON pointer ("/timeZone"), mixed in with the schema's own:
   * random strings rarely name a real account or time zone, and the success paths deserve runs too.
   */
  readonly hints?: Readonly<Record<string, fc.Arbitrary<unknown>>>
}

const MAX_ITEMS = 8

/**
 * Any JSON value without a `__proto__` or `constructor` key at any depth: the gateway refuses
 * those before validation (400 TOOLGATE_MALFORMED_REQUEST), which is a property of its own.
 */
export const plainJson: fc.Arbitrary<unknown> = fc.jsonValue().filter(value => !/"(__proto__|constructor)":/.test(JSON.stringify(value)))

/** An arbitrary of values the schema accepts. */
export function arbitraryFromSchema (schema: JsonSchema, options: FromSchemaOptions = {}, pointer = ''): fc.Arbitrary<unknown> {
  const own = ownArbitrary(schema, options, pointer)
  const hint = options.hints?.[pointer]
  const withHint = hint === undefined ? own : fc.oneof(own, hint)
  return 'default' in schema ? fc.oneof(withHint, fc.constant(schema.default)) : withHint
}

function ownArbitrary (schema: JsonSchema, options: FromSchemaOptions, pointer: string): fc.Arbitrary<unknown> {
  if ('const' in schema) return fc.constant(schema.const)
  if (schema.enum !== undefined) return fc.constantFrom(...schema.enum)
  // oneOf means "exactly one": zod emits it for discriminated unions, whose branches exclude each other.
  const branches = schema.anyOf ?? schema.oneOf
  if (branches !== undefined) return fc.oneof(...branches.map(branch => arbitraryFromSchema(branch, options, pointer)))
  const types = schema.type === undefined ? [] : typeof schema.type === 'string' ? [schema.type] : schema.type
  if (types.length === 0) return plainJson
  return fc.oneof(...types.map(type => ofType(type, schema, options, pointer)))
}

function ofType (type: string, schema: JsonSchema, options: FromSchemaOptions, pointer: string): fc.Arbitrary<unknown> {
  switch (type) {
    case 'object': return objectOf(schema, options, pointer)
    case 'array': return fc.array(arbitraryFromSchema(schema.items ?? {}, options, `${pointer}/0`), { minLength: schema.minItems ?? 0, maxLength: schema.maxItems ?? Math.max(MAX_ITEMS, schema.minItems ?? 0) })
    case 'string': return stringOf(schema)
    case 'integer': return fc.integer({ min: lowerBound(schema, 1), max: upperBound(schema, 1) })
    case 'number': return numberOf(schema)
    case 'boolean': return fc.boolean()
    case 'null': return fc.constant(null)
    default: throw new Error(`arbitraryFromSchema: unsupported type "${type}" at "${pointer}"`)
  }
}

function objectOf (schema: JsonSchema, options: FromSchemaOptions, pointer: string): fc.Arbitrary<Record<string, unknown>> {
  const properties = schema.properties ?? {}
  const model: Record<string, fc.Arbitrary<unknown>> = {}
  for (const [key, property] of Object.entries(properties)) model[key] = arbitraryFromSchema(property, options, `${pointer}/${key}`)
  const known = fc.record(model, { requiredKeys: [...(schema.required ?? [])] })
  const extra = schema.additionalProperties
  if (extra === undefined || extra === false) return known
  const values = extra === true ? plainJson : arbitraryFromSchema(extra, options, `${pointer}/*`)
  const extras = fc.dictionary(fc.string({ minLength: 1, maxLength: 8 }).filter(key => !(key in properties) && key !== '__proto__' && key !== 'constructor'), values, { maxKeys: 3 })
  return fc.tuple(known, extras).map(([a, b]) => ({ ...b, ...a }))
}

/**
 * Lengths count UTF-16 code units, as zod's `.min`/`.max` do. (JSON Schema counts code points:
 * a string of 64 emoji satisfies `maxLength: 64` of the published schema and fails zod's
 * `.max(64)`; the published schema cannot say "UTF-16 units", so the generator follows zod.)
 */
function stringOf (schema: JsonSchema): fc.Arbitrary<string> {
  const min = schema.minLength ?? 0
  const max = schema.maxLength
  const fits = (s: string): boolean => s.length >= min && (max === undefined || s.length <= max)
  if (schema.pattern !== undefined) return fc.stringMatching(new RegExp(schema.pattern)).filter(fits)
  const format = schema.format === undefined ? undefined : FORMATS[schema.format]
  if (format !== undefined) return format.filter(fits)
  return fc.string({ unit: 'binary', minLength: min, maxLength: max === undefined ? 64 : Math.min(max, min + 64) }).filter(fits)
}

/** Values of each `format` zod emits; `uri` stays http(s), the only scheme a URL tool here takes. */
const FORMATS: Readonly<Record<string, fc.Arbitrary<string>>> = {
  'uuid': fc.uuid(),
  'date-time': fc.date({ min: new Date('1970-01-01T00:00:00Z'), max: new Date('9999-12-31T23:59:59Z'), noInvalidDate: true }).map(d => d.toISOString()),
  'date': fc.date({ min: new Date('1970-01-01T00:00:00Z'), max: new Date('9999-12-31T00:00:00Z'), noInvalidDate: true }).map(d => d.toISOString().slice(0, 10)),
  'uri': fc.webUrl({ validSchemes: ['http', 'https'], withQueryParameters: true, withFragments: true }),
  'email': fc.emailAddress(),
  'ipv4': fc.ipV4(),
  'ipv6': fc.ipV6(),
}

function numberOf (schema: JsonSchema): fc.Arbitrary<number> {
  return fc.double({
    min: schema.exclusiveMinimum ?? schema.minimum ?? -1e12,
    max: schema.exclusiveMaximum ?? schema.maximum ?? 1e12,
    minExcluded: schema.exclusiveMinimum !== undefined,
    maxExcluded: schema.exclusiveMaximum !== undefined,
    noNaN: true,
    noDefaultInfinity: true,
  })
}

/** The smallest value allowed, stepping over an exclusive bound by `step`. */
export function lowerBound (schema: JsonSchema, step: number): number {
  if (schema.exclusiveMinimum !== undefined) return schema.exclusiveMinimum + step
  return schema.minimum ?? Number.MIN_SAFE_INTEGER
}

/** The largest value allowed, stepping under an exclusive bound by `step`. */
export function upperBound (schema: JsonSchema, step: number): number {
  if (schema.exclusiveMaximum !== undefined) return schema.exclusiveMaximum - step
  return schema.maximum ?? Number.MAX_SAFE_INTEGER
}
