import { GatewayError } from '../../core/errors.js'

/** Why authentication failed, as a bounded label for metrics and logs. */
export type AuthFailureReason = 'missing' | 'invalid_key' | 'invalid_token' | 'expired' | 'malformed'

/** RFC 6750 section 3.1 error codes this gateway uses. */
export type BearerErrorCode = 'invalid_request' | 'invalid_token' | 'insufficient_scope'

const REALM = 'toolgate'

// RFC 6750: error_description and scope are limited to %x20-21 / %x23-5B / %x5D-7E.
const UNSAFE = /[^\x20\x21\x23-\x5b\x5d-\x7e]/g

/**
 * The `WWW-Authenticate` value for a 401 or 403 (RFC 6750 section 3). Without `error` it is the
 * bare challenge a client without credentials should get.
 */
export function bearerChallenge (error?: BearerErrorCode, description?: string, scope?: string): string {
  const params = [`realm="${REALM}"`]
  if (error !== undefined) params.push(`error="${error}"`)
  if (description !== undefined) params.push(`error_description="${description.replace(UNSAFE, '')}"`)
  if (scope !== undefined) params.push(`scope="${scope.replace(UNSAFE, '')}"`)
  return `Bearer ${params.join(', ')}`
}

/**
 * A 401 with its challenge and the reason label; `detail` must be safe to show the caller.
 * Missing credentials get the bare challenge (RFC 6750 section 3.1); a refused credential gets
 * `invalid_token`, a request that carries credentials wrongly `invalid_request`.
 */
export function unauthenticated (reason: AuthFailureReason, detail: string, error: 'invalid_token' | 'invalid_request' = 'invalid_token', options?: ErrorOptions): GatewayError {
  const challenge = reason === 'missing' ? bearerChallenge() : bearerChallenge(error, detail)
  return new GatewayError('TOOLGATE_UNAUTHENTICATED', detail, { wwwAuthenticate: challenge, reason }, options)
}
