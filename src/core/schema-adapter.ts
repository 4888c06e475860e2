import { isThenable } from './thenable.js'
import type { StandardSchemaV1, StandardSchemaWithJSON } from './standard-schema.js'

/** A schema written by hand: a JSON Schema that describes it and a `parse` that enforces it. */
export interface SchemaAdapter<T> {
  /** JSON Schema (2020-12) of the accepted value: the listings, OpenAPI and exports show it. */
  readonly jsonSchema: Record<string, unknown>
  /** Returns the value, or throws. A thrown error with an `issues` list (zod, Valibot) keeps its paths. */
  readonly parse: (value: unknown) => T
}

/** Problems found when the adapter was made, reported by `defineTool` with the tool and field. */
const problems = new WeakMap<object, string>()

/**
 * Turn a plain `{ jsonSchema, parse }` into a schema a tool can declare. The result is a
 * Standard Schema with Standard JSON Schema, so any library that accepts those accepts it too.
 * `parse` and a copy of `jsonSchema` are taken now: changing the adapter object later changes nothing.
 *
 * @example
 * import { defineSchema } from 'toolgate'
 * const Name = defineSchema<{ name: string }>({
 *   jsonSchema: { type: 'object', properties: { name: { type: 'string' } }, required: ['name'] },
 *   parse (value) {
 *     const name = (value as { name?: unknown } | null)?.name
 *     if (typeof name !== 'string') throw new Error('name must be a string')
 *     return { name }
 *   },
 * })
 */
export function defineSchema<T> (adapter: SchemaAdapter<T>): StandardSchemaWithJSON<T, T> {
  const parse = typeof adapter?.parse === 'function' ? adapter.parse.bind(adapter) : undefined
  const json = copyOf(adapter?.jsonSchema)
  const jsonSchema = (): Record<string, unknown> => {
    if (json === undefined) throw new Error('defineSchema needs a jsonSchema object')
    return structuredClone(json)
  }
  const schema: StandardSchemaWithJSON<T, T> = Object.freeze({
    '~standard': Object.freeze({
      version: 1 as const,
      vendor: 'toolgate',
      validate: (value: unknown): StandardSchemaV1.Result<T> => {
        if (parse === undefined) throw new TypeError('defineSchema needs a parse function')
        let parsed: T
        try {
          parsed = parse(value)
        } catch (thrown) {
          return { issues: issuesOf(thrown) }
        }
        if (isThenable(parsed)) throw new TypeError('defineSchema parse returned a promise; it must validate synchronously')
        return { value: parsed }
      },
      jsonSchema: Object.freeze({ input: jsonSchema, output: jsonSchema }),
    }),
  })
  if (parse === undefined) problems.set(schema, 'is a defineSchema(...) without a parse function')
  else if (json === undefined) problems.set(schema, 'cannot give a JSON Schema: defineSchema(...) needs a jsonSchema object')
  return schema
}

export function problemOfAdapter (schema: object): string | undefined {
  return problems.get(schema)
}

function copyOf (value: unknown): Record<string, unknown> | undefined {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return undefined
  try {
    return JSON.parse(JSON.stringify(value)) as Record<string, unknown>
  } catch {
    return undefined
  }
}

/** The issues of a thrown error: its own `issues` when they read as Standard Schema issues, else one at the root. */
function issuesOf (thrown: unknown): StandardSchemaV1.Issue[] {
  const issues = (thrown as { issues?: unknown } | null)?.issues
  if (Array.isArray(issues) && issues.length > 0 && issues.every(isIssue)) return issues as StandardSchemaV1.Issue[]
  const message = thrown instanceof Error ? thrown.message : typeof thrown === 'string' ? thrown : ''
  return [{ message: message === '' ? 'invalid value' : message, path: [] }]
}

function isIssue (value: unknown): boolean {
  if (typeof value !== 'object' || value === null || typeof (value as { message?: unknown }).message !== 'string') return false
  const path = (value as { path?: unknown }).path
  return path === undefined || Array.isArray(path)
}
