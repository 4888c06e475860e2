import type { z } from 'zod'
import type { InputIssue } from './errors.js'

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
