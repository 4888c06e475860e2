import type { z } from 'zod'
import { GatewayError, type InputIssue } from './errors.js'
import type { StandardSchemaV1 } from './standard-schema.js'

/** RFC 6901: `~` and `/` inside a segment are escaped. */
export function toJsonPointer (path: readonly PropertyKey[]): string {
  let pointer = ''
  for (const segment of path) pointer += '/' + String(segment).replaceAll('~', '~0').replaceAll('/', '~1')
  return pointer
}

/** Every zod issue as `{ pointer, message, code }`, nested union issues included once each. */
export function toInputIssues (error: z.ZodError): InputIssue[] {
  return error.issues.map(issue => ({ pointer: toJsonPointer(issue.path), message: issue.message, code: issue.code }))
}

/** A Standard Schema issue as an input issue: the path as a JSON pointer, the vendor's code when it has one. */
export function fromStandardIssue (issue: StandardSchemaV1.Issue): InputIssue {
  const path = (issue.path ?? []).map(segment => (typeof segment === 'object' && segment !== null ? segment.key : segment))
  const { code, type } = issue as { code?: unknown, type?: unknown }
  return {
    pointer: toJsonPointer(path),
    message: typeof issue.message === 'string' && issue.message !== '' ? issue.message : 'invalid value',
    code: typeof code === 'string' ? code : typeof type === 'string' ? type : 'invalid',
  }
}

/** The 400 a caller gets for these issues of what it sent: the detail says them all, `errors` lists each at its pointer. */
export function invalidInput (...issues: readonly InputIssue[]): GatewayError {
  return new GatewayError('TOOLGATE_INVALID_INPUT', issues.map(issue => issue.message).join('; '), { errors: issues })
}
