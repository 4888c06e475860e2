import { Ajv2020, type ErrorObject, type ValidateFunction } from 'ajv/dist/2020.js'
import { isThenable } from './thenable.js'
import type { StandardSchemaV1 } from './standard-schema.js'

/*
 * A non-zod schema's validator lives in the library's own objects, which toolgate cannot copy
 * (a Valibot object's `entries`, an ArkType node's compiled functions stay mutable). So the
 * JSON Schema frozen at define time is enforced too, after the library's validation: whatever
 * happens to those objects later, a tool never accepts more than the JSON Schema it shows.
 * Formats are not checked (that stays the library's job): the guard only ever narrows.
 */

// One instance for all tools: compiled functions are cached by schema, and no schema has an $id.
const ajv = new Ajv2020({ strict: false, validateFormats: false, allErrors: true })

type Validate = (value: unknown) => unknown
type Issue = StandardSchemaV1.Issue & { readonly code: string }

/**
 * The library's validate, then the frozen JSON Schema's check of the same raw value. Compiled
 * now, so a JSON Schema that is not valid JSON Schema fails at start-up (this throws).
 */
export function guarded (validate: Validate, jsonSchema: Record<string, unknown>): Validate {
  const check: ValidateFunction = ajv.compile(jsonSchema)
  return value => {
    const result = validate(value)
    if (isThenable(result) || (result as { issues?: unknown }).issues != null) return result
    return check(value) ? result : { issues: (check.errors ?? []).map(issueOf) }
  }
}

function issueOf (error: ErrorObject): Issue {
  const path: PropertyKey[] = error.instancePath === '' ? [] : error.instancePath.slice(1).split('/').map(unescape)
  // Ajv reports an unknown or missing key at the object; the library validators point at the key.
  const params = error.params as { additionalProperty?: unknown, missingProperty?: unknown }
  const key = params.additionalProperty ?? params.missingProperty
  if (typeof key === 'string') path.push(key)
  return { path, message: error.message ?? 'does not match the JSON Schema', code: error.keyword }
}

function unescape (segment: string): string {
  return segment.replaceAll('~1', '/').replaceAll('~0', '~')
}
