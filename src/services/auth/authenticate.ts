import { SCOPES, type Principal } from '../../core/app-context.js'
import type { Config } from '../config.js'
import { GatewayError } from '../../core/errors.js'
import { createApiKeyVerifier } from './api-keys.js'
import { rememberBearer } from './caller-tokens.js'
import { unauthenticated } from './challenge.js'
import { looksLikeJwt, readCredential, type AuthHeaders } from './credentials.js'
import { createJwtVerifier } from './jwt.js'
import { JwksUnavailableError, JwtVerificationError } from './jwt-errors.js'

export type AuthConfig = Pick<Config, 'apiKeys' | 'jwt' | 'authDisabled'>

/**
 * The caller's principal, or a thrown 401 (or 503 when the JWKS is down). Synchronous for API
 * keys and anonymous callers (no promise on the hot path); a JWT may return a promise.
 */
export type Authenticate = (headers: AuthHeaders, rawHeaders?: readonly string[]) => Principal | Promise<Principal>

/**
 * Every caller when no credentials are configured, or when auth is turned off: whoever reaches
 * such a gateway may call its tools, so it may also read what they did (the console); it may
 * never approve.
 * @internal exported for its tests, not for the package
 */
export const ANONYMOUS: Principal = Object.freeze({ id: 'anonymous', scopes: Object.freeze([SCOPES.read, SCOPES.call, SCOPES.gatewayRead]), via: 'anonymous' })

/**
 * Who reads a route open to callers without credentials (the Swagger UI's page, or the whole
 * document when the operator publishes it): no scopes at all, so it can call nothing.
 */
export const PUBLIC_READER: Principal = Object.freeze({ id: 'public', scopes: Object.freeze([]), via: 'anonymous' })

/**
 * Build the authentication step. With no API keys and no JWT configured, or with `authDisabled`,
 * every caller is {@link ANONYMOUS} and presented credentials are ignored (whether that is allowed
 * on this address is `loadConfig`'s decision). Otherwise a caller must present exactly one of
 * `X-Api-Key: <key>`, `Authorization: ApiKey <key>` or `Authorization: Bearer <token>`; a bearer
 * token shaped like a JWT goes to the JWT verifier when one is configured, anything else is
 * looked up as an API key.
 *
 * Failures are `GatewayError('TOOLGATE_UNAUTHENTICATED')` with the extensions `wwwAuthenticate`
 * (an RFC 6750 challenge for the `WWW-Authenticate` header) and `reason` (a bounded label).
 * Key material errors in `config` throw `ConfigError` here, at start-up.
 *
 * @example
 * const authenticate = createAuthenticator({ apiKeys: [{ principal: 'ci', sha256: hashApiKey('s3cret'), scopes: ['tools:read'] }], jwt: undefined, authDisabled: false })
 * const principal = await authenticate({ 'x-api-key': 's3cret' }) // { id: 'ci', scopes: ['tools:read'], via: 'api-key' }
 */
export function createAuthenticator (config: AuthConfig): Authenticate {
  if (config.authDisabled || (config.apiKeys.length === 0 && config.jwt === undefined)) return () => ANONYMOUS
  const byApiKey = apiKeyStep(config)
  const byJwt = config.jwt === undefined ? undefined : jwtStep(createJwtVerifier(config.jwt))
  return (headers, rawHeaders) => {
    const credential = readCredential(headers, rawHeaders)
    switch (credential.kind) {
      case 'none': throw unauthenticated('missing', 'send an API key (X-Api-Key) or a bearer token (Authorization: Bearer)')
      case 'malformed': throw unauthenticated('malformed', credential.problem, 'invalid_request')
      case 'api-key': return byApiKey(credential.value)
      case 'bearer': return byJwt !== undefined && looksLikeJwt(credential.value) ? byJwt(credential.value) : byApiKey(credential.value)
    }
  }
}

function apiKeyStep (config: AuthConfig): (key: string) => Principal {
  const verify = createApiKeyVerifier(config.apiKeys)
  const jwtOnly = config.apiKeys.length === 0
  return key => {
    const principal = verify(key)
    if (principal !== undefined) return principal
    throw jwtOnly ? unauthenticated('malformed', 'the bearer token is not a JWT') : unauthenticated('invalid_key', 'the API key is not valid')
  }
}

function jwtStep (verify: (token: string) => Promise<Principal>): (token: string) => Promise<Principal> {
  return async token => {
    try {
      // Kept for an upstream that exchanges the caller's token for its own (RFC 8693).
      return rememberBearer(await verify(token), token)
    } catch (error) {
      if (error instanceof JwtVerificationError) throw unauthenticated(error.reason, error.description, 'invalid_token', { cause: error })
      if (error instanceof JwksUnavailableError) {
        throw new GatewayError('TOOLGATE_UNAVAILABLE', 'the token signing keys are unavailable; retry later', { retryAfter: 5 }, { cause: error })
      }
      throw error
    }
  }
}
