/**
 * Keys that combine a principal id with something else. A principal id may contain any
 * character (an API key's name, a token's `sub`), so joining with a separator is ambiguous:
 * principal `a/b` without a session and principal `a` in session `b` would share a domain.
 * The id is length-prefixed instead, which no choice of id or suffix can imitate.
 */

/** The principal's own key: `<length>:<id>`. */
export function principalKey (principalId: string): string {
  return `${principalId.length}:${principalId}`
}

/** The concurrency domain: the principal's own, or one of its sessions (sessions are per principal). */
export function domainOf (principalId: string, session: string | undefined): string {
  return session === undefined ? principalKey(principalId) : `${principalKey(principalId)}/${session}`
}

/** A principal's key for one tool (per-tool rate limits). */
export function principalToolKey (principalId: string, toolId: string): string {
  return `${principalKey(principalId)}|${toolId}`
}
