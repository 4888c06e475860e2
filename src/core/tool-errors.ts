import { ERRORS, GatewayError, isToolCode, TOOL_CODE, type ToolError, type ToolgateError } from './errors.js'
import type { AnyTool, ToolErrorDeclaration } from './tool.js'

/*
 * A tool's own failures (`ToolError`s) are part of what its operation documents. The gateway's
 * catalogue already documents every status a call of any tool can answer; a tool that fails
 * with a status outside it declares that failure in `errors`, and a status it did not declare
 * is never answered: a document that generated clients trust must hold for every answer.
 */

/** Every status the gateway itself can answer to a tool call: the catalogue's, less the routing-only 405. */
export const GATEWAY_CALL_STATUSES: readonly number[] = [...new Set(Object.values(ERRORS).map(e => e.status))].filter(s => s !== 405).sort()

/**
 * The statuses every operation documents whatever its declaration: 410 (an expired approval)
 * is documented only where an approval can be asked for, 504 only where the tool has a timeout.
 * A `ToolError` of one of these is answered as it is, declared or not.
 */
const ANY_CALL_STATUSES: ReadonlySet<number> = new Set(GATEWAY_CALL_STATUSES.filter(s => s !== 410 && s !== 504))

/** Whether every tool operation documents `status`, whatever the tool declares. */
export function isAnyCallStatus (status: number): boolean {
  return ANY_CALL_STATUSES.has(status)
}

/**
 * The `ToolError` as the caller gets it: as thrown when its status is one every operation
 * documents or when the tool declares it (status and code); otherwise a 500 tool failure, since
 * its status is in no document. The log line of that 500 names the undeclared status and code,
 * so the author can declare it.
 */
export function declaredFailure (tool: AnyTool, error: ToolError): ToolgateError {
  if (ANY_CALL_STATUSES.has(error.status)) return error
  if (tool.errors.some(declared => declared.status === error.status && declared.code === error.code)) return error
  return new GatewayError('TOOLGATE_TOOL_FAILED', `"${tool.id}" threw ToolError ${error.status} ${error.code}, which its declaration's \`errors\` does not list: answered as 500, since its operation documents no such status`, {}, { cause: error, replayed: error.replayed })
}

const ENTRY_FIELDS = new Set(['status', 'code', 'description'])

/** Validate `errors` of a declaration: a frozen copy, sorted by status then code; `[]` when absent. */
export function toolErrorsOf (value: unknown, fail: (field: string, problem: string) => never): readonly ToolErrorDeclaration[] {
  if (value === undefined) return Object.freeze([])
  if (!Array.isArray(value)) return fail('errors', 'must be an array of { status, code, description }')
  const seen = new Set<string>()
  const entries = value.map((entry: unknown, i): ToolErrorDeclaration => {
    const at = `errors[${i}]`
    if (typeof entry !== 'object' || entry === null || Array.isArray(entry)) return fail(at, 'must be an object { status, code, description }')
    const { status, code, description } = entry as Record<string, unknown>
    for (const key of Object.keys(entry)) if (!ENTRY_FIELDS.has(key)) fail(at, `has unknown field "${key}"; known: status, code, description`)
    if (typeof status !== 'number' || !Number.isInteger(status) || status < 400 || status > 599) fail(`${at}.status`, `must be an integer 400-599, got ${String(status)}`)
    if (!isToolCode(code)) fail(`${at}.code`, `must match ${String(TOOL_CODE)} and not start with TOOLGATE_, got ${JSON.stringify(code)}`)
    if (seen.has(code as string)) fail(`${at}.code`, `declares ${String(code)} twice; a code has one status`)
    seen.add(code as string)
    if (typeof description !== 'string' || description.trim() === '') fail(`${at}.description`, 'must be a non-empty string: when the tool answers it, and what the caller can do')
    return Object.freeze({ status: status as number, code: code as string, description: description as string })
  })
  return Object.freeze(entries.sort((a, b) => a.status - b.status || a.code.localeCompare(b.code)))
}
