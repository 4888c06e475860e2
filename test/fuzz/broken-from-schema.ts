import fc from 'fast-check'
import { arbitraryFromSchema, lowerBound, plainJson, upperBound, type JsonSchema } from './arbitrary-from-schema.js'

/** An input the schema refuses, and how it was broken (for the counterexample report). */
export interface Broken {
  readonly value: unknown
  readonly how: string
}

// A `__proto__` or `constructor` key is refused before validation (400 MALFORMED_REQUEST): a different property.
const plainKey = fc.string({ minLength: 1, maxLength: 12 }).filter(key => key !== '__proto__' && key !== 'constructor')

/**
 * Inputs an object schema refuses: a valid input (from `valid`) with exactly one thing broken:
 * a required key dropped, an extra key, or one property of the wrong type or out of range; or
 * no object at all. Each is invalid by the JSON Schema alone, whatever refinements zod adds.
 */
export function brokenFromSchema (schema: JsonSchema, valid: fc.Arbitrary<unknown>): fc.Arbitrary<Broken> {
  const objects = valid as fc.Arbitrary<Record<string, unknown>>
  const properties = schema.properties ?? {}
  const breakers: Array<fc.Arbitrary<Broken>> = [
    fc.constantFrom<unknown>([], 'text', 42, null, true).map(value => ({ value, how: 'not an object' })),
  ]
  const required = schema.required ?? []
  if (required.length > 0) {
    breakers.push(fc.tuple(objects, fc.constantFrom(...required)).map(([input, key]) => ({ value: without(input, key), how: `required "${key}" dropped` })))
  }
  if (schema.additionalProperties === false) {
    const extra = plainKey.filter(key => !(key in properties))
    breakers.push(fc.tuple(objects, extra, plainJson).map(([input, key, v]) => ({ value: { ...input, [key]: v }, how: `extra key "${key}"` })))
  }
  for (const [key, property] of Object.entries(properties)) {
    const bad = badValues(property)
    if (bad !== undefined) breakers.push(fc.tuple(objects, bad).map(([input, b]) => ({ value: { ...input, [key]: b.value }, how: `"${key}": ${b.how}` })))
  }
  return fc.oneof(...breakers)
}

function without (input: Record<string, unknown>, key: string): Record<string, unknown> {
  const { [key]: _dropped, ...rest } = input
  return rest
}

/** Values `schema` refuses, or undefined when this module cannot tell (anyOf and friends). */
function badValues (schema: JsonSchema): fc.Arbitrary<Broken> | undefined {
  if (schema.anyOf !== undefined || schema.oneOf !== undefined) return undefined
  if ('const' in schema || schema.enum !== undefined) {
    const allowed = 'const' in schema ? [schema.const] : schema.enum!
    return plainJson.filter(v => !allowed.some(a => JSON.stringify(a) === JSON.stringify(v))).map(value => ({ value, how: 'not one of the allowed values' }))
  }
  const types = schema.type === undefined ? [] : typeof schema.type === 'string' ? [schema.type] : [...schema.type]
  if (types.length === 0) return undefined
  const options = [wrongType(types), ...(types.length === 1 ? outOfRange(types[0]!, schema) : [])]
  return fc.oneof(...options)
}

const VALUES_OF: Readonly<Record<string, fc.Arbitrary<unknown>>> = {
  string: fc.string(),
  number: fc.double({ noNaN: true, noDefaultInfinity: true }),
  integer: fc.integer(),
  boolean: fc.boolean(),
  null: fc.constant(null),
  array: fc.array(plainJson, { maxLength: 3 }),
  object: fc.dictionary(plainKey, plainJson, { maxKeys: 3 }),
}

function wrongType (types: readonly string[]): fc.Arbitrary<Broken> {
  const allowed = new Set(types)
  if (allowed.has('number')) allowed.add('integer')
  const others = Object.keys(VALUES_OF).filter(type => !allowed.has(type) && !(type === 'number' && allowed.has('integer')))
  const wrong = others.map(type => VALUES_OF[type]!.map(value => ({ value, how: `a ${type} instead of ${types.join(' or ')}` })))
  if (types.includes('integer') && !types.includes('number')) {
    wrong.push(fc.double({ noNaN: true, noDefaultInfinity: true }).filter(n => !Number.isInteger(n)).map(value => ({ value, how: 'a fraction instead of an integer' })))
  }
  return fc.oneof(...wrong)
}

function outOfRange (type: string, schema: JsonSchema): Array<fc.Arbitrary<Broken>> {
  if (type === 'string') return stringsOutside(schema)
  if (type === 'integer' || type === 'number') return numbersOutside(schema, type === 'integer' ? 1 : Number.EPSILON)
  if (type === 'array') return arraysOutside(schema)
  if (type === 'object') {
    const nested = brokenFromSchema(schema, arbitraryFromSchema(schema))
    return [nested.map(b => ({ value: b.value, how: `nested: ${b.how}` }))]
  }
  return []
}

function stringsOutside (schema: JsonSchema): Array<fc.Arbitrary<Broken>> {
  const out: Array<fc.Arbitrary<Broken>> = []
  if (schema.maxLength !== undefined) {
    const max = schema.maxLength
    out.push(fc.integer({ min: max + 1, max: max + 8 }).map(n => ({ value: 'a'.repeat(n), how: `longer than ${max}` })))
  }
  if (schema.minLength !== undefined && schema.minLength > 0) {
    const min = schema.minLength
    out.push(fc.string({ maxLength: min - 1 }).filter(s => s.length < min).map(value => ({ value, how: `shorter than ${min}` })))
  }
  if (schema.pattern !== undefined) {
    const pattern = new RegExp(schema.pattern)
    out.push(fc.string({ maxLength: 16 }).filter(s => !pattern.test(s)).map(value => ({ value, how: `not matching ${schema.pattern}` })))
  } else if (schema.format !== undefined && NOT_FORMAT[schema.format] !== undefined) {
    out.push(fc.constantFrom(...NOT_FORMAT[schema.format]!).map(value => ({ value, how: `not a ${schema.format}` })))
  }
  return out
}

const NOT_FORMAT: Readonly<Record<string, readonly string[]>> = {
  'uuid': ['not-a-uuid', '123', 'g0000000-0000-4000-8000-000000000000'],
  'date-time': ['yesterday', '2024-13-45T99:00:00Z', '2024-01-01'],
  'uri': ['not a url', '//no-scheme.example', 'http//missing-colon'],
  'email': ['no-at-sign', '@nobody'],
}

function numbersOutside (schema: JsonSchema, step: number): Array<fc.Arbitrary<Broken>> {
  const out: Array<fc.Arbitrary<Broken>> = []
  const low = lowerBound(schema, step)
  const high = upperBound(schema, step)
  if (low > Number.MIN_SAFE_INTEGER) out.push(fc.integer({ min: 1, max: 1000 }).map(d => ({ value: low - d, how: `below ${low}` })))
  if (high < Number.MAX_SAFE_INTEGER) out.push(fc.integer({ min: 1, max: 1000 }).map(d => ({ value: high + d, how: `above ${high}` })))
  return out
}

function arraysOutside (schema: JsonSchema): Array<fc.Arbitrary<Broken>> {
  const out: Array<fc.Arbitrary<Broken>> = []
  if (schema.maxItems !== undefined) out.push(fc.constant({ value: Array.from({ length: schema.maxItems + 1 }, () => null), how: `more than ${schema.maxItems} items` }))
  if (schema.minItems !== undefined && schema.minItems > 0) out.push(fc.constant({ value: [], how: `fewer than ${schema.minItems} items` }))
  return out
}
