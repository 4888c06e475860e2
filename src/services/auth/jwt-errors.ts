import type { errors as JoseErrors } from 'jose'

/** Bounded reasons a bearer JWT is refused; each becomes a 401 `invalid_token` challenge. */
export type JwtFailureReason = 'invalid_token' | 'expired' | 'malformed'

/**
 * A token was refused. `description` is safe to send (RFC 6750 `error_description`): a fixed
 * phrase, never the token, a claim value or jose's message.
 */
export class JwtVerificationError extends Error {
  /** The RFC 6750 error code. */
  readonly error = 'invalid_token' as const

  constructor (readonly reason: JwtFailureReason, readonly description: string, options?: ErrorOptions) {
    super(description, options)
    this.name = 'JwtVerificationError'
  }
}

/** The JWKS could not be fetched or parsed: the gateway's problem, not the caller's token. */
export class JwksUnavailableError extends Error {
  constructor (options?: ErrorOptions) {
    super('the token signing keys could not be fetched', options)
    this.name = 'JwksUnavailableError'
  }
}

const CLAIM_DESCRIPTIONS: Record<string, string> = {
  aud: 'audience mismatch',
  iss: 'issuer mismatch',
  nbf: 'token not yet valid',
  iat: 'token issued in the future',
  sub: 'subject claim missing or invalid',
  exp: 'expiry claim missing or invalid',
}

/**
 * Map what jose throws to a refusal with a safe description. Anything that is not about the
 * token (a JWKS outage, a defect) is returned unchanged for the caller to rethrow. `errors` is
 * jose's error classes, from the module the caller already loaded (jose loads lazily).
 */
export function jwtFailure (error: unknown, errors: typeof JoseErrors): unknown {
  const fail = (reason: JwtFailureReason, description: string): JwtVerificationError => new JwtVerificationError(reason, description, { cause: error })
  if (error instanceof JwtVerificationError || error instanceof JwksUnavailableError) return error
  if (error instanceof errors.JWTExpired) return fail('expired', 'token expired')
  if (error instanceof errors.JWTClaimValidationFailed) return fail('invalid_token', CLAIM_DESCRIPTIONS[error.claim] ?? 'claims invalid')
  if (error instanceof errors.JOSEAlgNotAllowed) return fail('invalid_token', 'algorithm not allowed')
  if (error instanceof errors.JWSSignatureVerificationFailed) return fail('invalid_token', 'signature invalid')
  if (error instanceof errors.JWKSNoMatchingKey) return fail('invalid_token', 'no key matches the token')
  if (error instanceof errors.JWKSMultipleMatchingKeys) return fail('invalid_token', 'several keys match the token; it needs a kid')
  if (error instanceof errors.JOSENotSupported) return fail('invalid_token', 'token uses an unsupported feature')
  if (error instanceof errors.JWSInvalid || error instanceof errors.JWTInvalid) return fail('malformed', 'token malformed')
  return error
}
