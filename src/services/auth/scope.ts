import type { Principal } from '../../core/app-context.js'
import { GatewayError } from '../../core/errors.js'
import { bearerChallenge } from './challenge.js'

/**
 * Refuse a principal that lacks `scope`: a 403 whose `WWW-Authenticate` names the scope to ask
 * for (RFC 6750 `insufficient_scope`), with `reason: 'insufficient_scope'` for metrics.
 *
 * @example
 * requireScope(principal, SCOPES.call) // throws unless principal.scopes includes 'tools:call'
 */
export function requireScope (principal: Principal, scope: string): void {
  if (principal.scopes.includes(scope)) return
  throw new GatewayError('TOOLGATE_FORBIDDEN', `this request needs the "${scope}" scope`, {
    wwwAuthenticate: bearerChallenge('insufficient_scope', undefined, scope),
    reason: 'insufficient_scope',
  })
}
