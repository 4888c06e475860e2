/** The request headers authentication reads; Node may hand a repeated header over as an array. */
export interface AuthHeaders {
  readonly authorization?: string | readonly string[] | undefined
  readonly 'x-api-key'?: string | readonly string[] | undefined
}

/** What the caller presented, before any verification. */
export type Credential =
  | { readonly kind: 'none' }
  | { readonly kind: 'api-key', readonly value: string }
  | { readonly kind: 'bearer', readonly value: string }
  | { readonly kind: 'malformed', readonly problem: string }

/** Three base64url parts; an unsecured token's signature part is empty, and it must still reach the JWT verifier to be refused as such. */
const JWT_SHAPE = /^[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]*$/

export function looksLikeJwt (token: string): boolean {
  return JWT_SHAPE.test(token)
}

/**
 * Read the credential from `X-Api-Key: <key>`, `Authorization: ApiKey <key>` or
 * `Authorization: Bearer <token>` (scheme names are case-insensitive, RFC 9110). More than one
 * credential is refused rather than guessing which one counts (RFC 6750 section 2).
 */
export function readCredential (headers: AuthHeaders, rawHeaders?: readonly string[]): Credential {
  if (rawHeaders !== undefined && repeatsCredential(rawHeaders)) return { kind: 'malformed', problem: 'a credential header is repeated' }
  const apiKey = single(headers['x-api-key'])
  const authorization = single(headers.authorization)
  if (apiKey === null || authorization === null) return { kind: 'malformed', problem: 'a credential header is repeated' }
  if (apiKey !== undefined && authorization !== undefined) return { kind: 'malformed', problem: 'send one credential, not both X-Api-Key and Authorization' }
  if (apiKey !== undefined) return apiKey === '' ? { kind: 'malformed', problem: 'the X-Api-Key header is empty' } : { kind: 'api-key', value: apiKey }
  if (authorization === undefined) return { kind: 'none' }
  return fromAuthorization(authorization)
}

function fromAuthorization (value: string): Credential {
  const match = /^([A-Za-z][A-Za-z0-9!#$%&'*+.^_`|~-]*) +(\S+)$/.exec(value)
  if (match === null) return { kind: 'malformed', problem: 'the Authorization header must be "Bearer <token>" or "ApiKey <key>"' }
  const scheme = match[1]!.toLowerCase()
  const token = match[2]!
  if (scheme === 'bearer') return { kind: 'bearer', value: token }
  if (scheme === 'apikey') return { kind: 'api-key', value: token }
  return { kind: 'malformed', problem: 'unsupported authorization scheme; use Bearer or ApiKey' }
}

/**
 * Node keeps only the first of repeated `Authorization` headers (and joins repeated `X-Api-Key`
 * values with a comma), so a repeat can only be seen in the raw name/value list.
 */
function repeatsCredential (rawHeaders: readonly string[]): boolean {
  let seen = 0
  for (let i = 0; i < rawHeaders.length; i += 2) {
    const name = rawHeaders[i]!
    if ((name.length === 13 && name.toLowerCase() === 'authorization') || (name.length === 9 && name.toLowerCase() === 'x-api-key')) seen++
  }
  return seen > 1
}

/** The header's one value, trimmed; `undefined` when absent, `null` when repeated. */
function single (value: string | readonly string[] | undefined): string | undefined | null {
  if (value === undefined) return undefined
  if (typeof value === 'string') return value.trim()
  return value.length === 1 ? value[0]!.trim() : null
}
