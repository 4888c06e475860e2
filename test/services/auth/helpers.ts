import { exportSPKI, generateKeyPair, SignJWT, type CryptoKey, type JWTPayload } from 'jose'
import { expect } from 'vitest'
import { JwtSchema } from '../../../src/services/config.js'
import { GatewayError } from '../../../src/core/errors.js'
import { createAuthenticator, type AuthConfig } from '../../../src/services/auth/authenticate.js'
import { type AuthHeaders } from '../../../src/services/auth/credentials.js'
import { type JwtConfig } from '../../../src/services/auth/jwt.js'
import type { Principal } from '../../../src/core/app-context.js'

export const ISSUER = 'https://idp.test'
export const AUDIENCE = 'toolgate'
export const HS_SECRET = 'a-shared-secret-that-is-32-bytes-or-more'

/** A JWT section as `loadConfig` would produce it (defaults applied). */
export function jwtConfig (overrides: Record<string, unknown>): JwtConfig {
  return JwtSchema.parse({ issuer: ISSUER, audience: AUDIENCE, algorithms: ['ES256'], ...overrides })
}

export interface EsKeys {
  readonly privateKey: CryptoKey
  readonly publicKey: CryptoKey
  readonly pem: string
}

export async function esKeys (): Promise<EsKeys> {
  const { privateKey, publicKey } = await generateKeyPair('ES256', { extractable: true })
  return { privateKey, publicKey, pem: await exportSPKI(publicKey) }
}

export interface TokenOptions {
  readonly alg?: string
  readonly kid?: string
  readonly issuer?: string
  readonly audience?: string
  readonly subject?: string | null
  readonly expiresAt?: number | string | null
  /** `iat` in seconds (default: now). */
  readonly issuedAt?: number
}

/** A signed token with good defaults; `null` leaves a claim out. */
export async function sign (key: CryptoKey | Uint8Array, payload: JWTPayload = { scope: 'tools:read tools:call' }, options: TokenOptions = {}): Promise<string> {
  const jwt = new SignJWT(payload)
    .setProtectedHeader({ alg: options.alg ?? 'ES256', ...(options.kid === undefined ? {} : { kid: options.kid }) })
    .setIssuer(options.issuer ?? ISSUER)
    .setAudience(options.audience ?? AUDIENCE)
    .setIssuedAt(options.issuedAt)
  if (options.subject !== null) jwt.setSubject(options.subject ?? 'alice')
  if (options.expiresAt !== null) jwt.setExpirationTime(options.expiresAt ?? '5m')
  return await jwt.sign(key)
}

export const secretBytes = (secret: string = HS_SECRET): Uint8Array => new TextEncoder().encode(secret)

/** An unsecured token (`alg: none`), built by hand since jose refuses to produce one for verification. */
export function unsecuredToken (payload: JWTPayload): string {
  const part = (value: object): string => Buffer.from(JSON.stringify(value)).toString('base64url')
  return `${part({ alg: 'none', typ: 'JWT' })}.${part(payload)}.`
}

export const nowSec = (): number => Math.floor(Date.now() / 1000)

/** The error a promise rejects with; fails the test when it resolves. */
export async function rejectionOf (promise: Promise<unknown>): Promise<unknown> {
  const settled = await promise.then(value => ({ ok: true as const, value }), (error: unknown) => ({ ok: false as const, error }))
  if (settled.ok) expect.fail(`expected a rejection, got ${JSON.stringify(settled.value)}`)
  return settled.error
}

/** Assert a 401 with the given reason; returns it for further checks. */
export async function expect401 (promise: Promise<unknown>, reason: string): Promise<GatewayError> {
  const error = await rejectionOf(promise)
  expect(error).toBeInstanceOf(GatewayError)
  const gatewayError = error as GatewayError
  expect(gatewayError.code).toBe('TOOLGATE_UNAUTHENTICATED')
  expect(gatewayError.status).toBe(401)
  expect(gatewayError.extensions.reason).toBe(reason)
  return gatewayError
}

/**
 * The authenticator under test, with its answer always as a promise: production code takes
 * the synchronous answer of an API key as is; the tests read every outcome the same way.
 */
export type PromisedAuthenticate = (headers: AuthHeaders) => Promise<Principal>

export function promisedAuthenticator (config: AuthConfig): PromisedAuthenticate {
  const authenticate = createAuthenticator(config)
  return async headers => await authenticate(headers)
}
