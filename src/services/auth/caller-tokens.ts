import type { Principal } from '../../core/app-context.js'

/*
 * The bearer token a principal proved itself with, kept beside the principal object (never
 * on it: a principal is logged, audited and shown, its token never is). An upstream that acts
 * on behalf of the caller (token exchange) asks for it; nothing else does. Gone with the
 * principal object, at the end of the request.
 */

const tokens = new WeakMap<Principal, string>()

export function rememberBearer (principal: Principal, token: string): Principal {
  tokens.set(principal, token)
  return principal
}

/** The token `principal` was verified from, when it came with one (a JWT); undefined for API keys and in-process calls. */
export function bearerOf (principal: Principal): string | undefined {
  return tokens.get(principal)
}
