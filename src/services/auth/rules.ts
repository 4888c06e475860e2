import type { Config } from '../config.js'
import { compileGlob } from './glob.js'

/** One principal's allow and deny lists of tool-id globs (`principal: '*'` applies to everyone). */
export type Rule = Config['rules'][number]

/** May this principal call (or see) this tool? */
export type PermissionCheck = (principalId: string, toolId: string) => boolean

interface Compiled {
  readonly allow: RegExp[]
  readonly deny: RegExp[]
}

/** The principal whose rules apply to every caller. */
export const EVERYONE = '*'

/**
 * Compile the gateway's permission rules once. A caller is subject to its own rules and to the
 * rules for `*`, merged. Deny wins over allow. With no rules at all everything is allowed; once
 * any rule exists, for any principal, whatever is not explicitly allowed is denied, for every
 * principal (a principal with no rules of its own gets only what `*` allows).
 *
 * @example
 * const allowed = createPermissionRules([
 *   { principal: '*', allow: ['time_*'], deny: [] },
 *   { principal: 'ops', allow: ['notes_*'], deny: ['notes_delete'] },
 * ])
 * allowed('ops', 'notes_read')    // true
 * allowed('ops', 'notes_delete')  // false
 * allowed('guest', 'notes_read')  // false
 */
export function createPermissionRules (rules: readonly Rule[]): PermissionCheck {
  if (rules.length === 0) return () => true
  const byPrincipal = new Map<string, Compiled>()
  for (const rule of rules) {
    let compiled = byPrincipal.get(rule.principal)
    if (compiled === undefined) byPrincipal.set(rule.principal, compiled = { allow: [], deny: [] })
    compiled.allow.push(...rule.allow.map(compileGlob))
    compiled.deny.push(...rule.deny.map(compileGlob))
  }
  const everyone = byPrincipal.get(EVERYONE)
  return (principalId, toolId) => {
    const applicable = [everyone, byPrincipal.get(principalId)]
    const matches = (globs: RegExp[] | undefined): boolean => globs?.some(glob => glob.test(toolId)) ?? false
    if (applicable.some(rule => matches(rule?.deny))) return false
    return applicable.some(rule => matches(rule?.allow))
  }
}
