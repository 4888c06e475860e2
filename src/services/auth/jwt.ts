import type { JWTPayload } from 'jose'
import type { Principal } from '../../core/app-context.js'
import { jose } from './jose.js'
import { JwtVerificationError, jwtFailure } from './jwt-errors.js'
import { jwtKeySource, type JwtConfig } from './jwt-key.js'

export type { JwtConfig } from './jwt-key.js'

/** Longest `sub` accepted as a principal id, as for API key principals. */
const MAX_SUBJECT = 128

/**
 * Build the verifier of bearer JWTs. Algorithms are pinned by the configuration (and narrowed to
 * what the key can serve, see {@link jwtKeySource}); issuer, audience, `exp` and `sub` are
 * required. Invalid PEM keys and key/algorithm mismatches throw `ConfigError` here, at start-up.
 *
 * The returned function resolves with the principal (`sub`, scopes from `scopeClaim`), rejects
 * with {@link JwtVerificationError} for a refused token, with `JwksUnavailableError` when the
 * key set cannot be fetched, and with anything else only on a defect.
 *
 * @example
 * const verify = createJwtVerifier({ issuer: 'https://idp.example', audience: 'toolgate',
 *   algorithms: ['HS256'], key: 'a-shared-secret-of-at-least-32-bytes', scopeClaim: 'scope', clockToleranceSec: 5, principalPrefix: 'jwt:' })
 * const principal = await verify(token) // { id: 'jwt:alice', scopes: ['tools:read'], via: 'jwt' }
 */
export function createJwtVerifier (jwt: JwtConfig): (token: string) => Promise<Principal> {
  const { algorithms, getKey } = jwtKeySource(jwt)
  const options = {
    algorithms: [...algorithms],
    issuer: jwt.issuer,
    audience: jwt.audience,
    clockTolerance: jwt.clockToleranceSec,
    requiredClaims: ['sub', 'exp'],
  }
  const loading = jose()
  return async token => {
    const { errors, jwtVerify } = await loading
    let payload: JWTPayload
    try {
      ({ payload } = await jwtVerify(token, getKey, options))
    } catch (error) {
      throw jwtFailure(error, errors)
    }
    // jose checks `iat` only against a maximum token age: a token "issued" in the future would
    // otherwise stay valid for longer than its issuer meant, so allow the clock skew and no more.
    if (typeof payload.iat === 'number' && payload.iat > Date.now() / 1000 + jwt.clockToleranceSec) {
      throw new JwtVerificationError('invalid_token', 'token issued in the future')
    }
    return principalOf(payload, jwt.scopeClaim, jwt.principalPrefix)
  }
}

/**
 * The principal of a verified token. Its id carries `principalPrefix` (`jwt:` by default), so a
 * token whose `sub` is `alice` is never the API key principal `alice`: the two share no notes,
 * idempotency records, sessions or rules unless the operator empties the prefix on purpose.
 */
function principalOf (payload: JWTPayload, scopeClaim: string, prefix: string): Principal {
  const { sub } = payload
  if (typeof sub !== 'string' || sub === '' || sub.length > MAX_SUBJECT) {
    throw new JwtVerificationError('invalid_token', 'subject claim missing or invalid')
  }
  return Object.freeze({ id: prefix + sub, scopes: Object.freeze(scopesOf(payload[scopeClaim])), via: 'jwt' })
}

/** OAuth's space-separated `scope` string, or an array of strings (`scp`, `roles`, ...). */
function scopesOf (claim: unknown): string[] {
  if (claim === undefined) return []
  if (typeof claim === 'string') return claim.split(' ').filter(scope => scope !== '')
  if (Array.isArray(claim) && claim.every(scope => typeof scope === 'string')) return claim.filter(scope => scope !== '')
  throw new JwtVerificationError('invalid_token', 'scope claim malformed')
}
