import { ERRORS, isToolCode, TOOL_CODE } from './errors.js'
import type { ToolErrorDeclaration } from './tool.js'

/*
 * A tool's own failures (`ToolError`s) are part of what its operation documents. The gateway's
 * catalogue already documents every status a call of any tool can answer; a tool that fails
 * with a status outside it declares that failure in `errors`, so the document a generated
 * client trusts holds that answer too. A thrown `ToolError` is answered with its status and
 * code whether declared or not (the contract); the conformance test holds the shipped tools
 * to declaring every one.
 */

/** Every status the gateway itself can answer to a tool call: the catalogue's, less the routing-only 405. */
export const GATEWAY_CALL_STATUSES: readonly number[] = [...new Set(Object.values(ERRORS).map(e => e.status))].filter(s => s !== 405).sort()

/**
 * The statuses every operation documents whatever its declaration: 410 (an expired approval)
 * is documented only where an approval can be asked for, 504 only where the tool has a timeout.
 * A tool need not declare these: its operation documents them anyway.
 */
const ANY_CALL_STATUSES: ReadonlySet<number> = new Set(GATEWAY_CALL_STATUSES.filter(s => s !== 410 && s !== 504))

/** Whether every tool operation documents `status`, whatever the tool declares. */
export function isAnyCallStatus (status: number): boolean {
  return ANY_CALL_STATUSES.has(status)
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
