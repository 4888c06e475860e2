import { randomBytes } from 'node:crypto'
import * as client from 'openid-client'
import { z } from 'zod'
import { GatewayError } from '../../../core/errors.js'
import { ConfigError } from '../../config.js'
import type { KeyedStore } from '../../keyed-store.js'
import { isLoopback } from '../../loopback.js'

export interface OidcSignInOptions {
  /** `JWT_ISSUER`: its `/.well-known/openid-configuration` says where everything is. */
  readonly issuer: string
  readonly clientId: string
  /** A confidential client's secret (HTTP Basic); undefined: a public client (PKCE alone). */
  readonly clientSecret?: string
  readonly scope: string
  /** The longest a session lasts, however often it is refreshed. */
  readonly sessionTtlMs: number
  readonly store: KeyedStore
  readonly now?: () => number
}

/** A sign-in under way: what the callback must match (state, nonce) and prove (the PKCE verifier). */
const Flow = z.object({ verifier: z.string(), state: z.string(), nonce: z.string(), redirectUri: z.string() })
/** A signed-in person's tokens; only the gateway ever holds them. */
const Session = z.object({ accessToken: z.string(), refreshToken: z.string().optional(), expiresAt: z.number(), endsAt: z.number() })
type Session = z.infer<typeof Session>

/** How long a person may take at the issuer's login page. */
const FLOW_TTL_MS = 10 * 60_000
/** Refresh an access token this long before it expires, so no request carries one that just did. */
const REFRESH_AHEAD_MS = 30_000
/** Without `expires_in`, an access token is trusted for this long before a refresh is tried. */
const DEFAULT_TOKEN_MS = 5 * 60_000
const FLOW = 'flow:'
const SESSION = 'session:'

/**
 * The approvals page's sign-in with the gateway's OpenID Connect issuer, by openid-client:
 * authorization code with PKCE (S256), state and nonce; the tokens stay in the store, the
 * browser gets a random session id. The access token is then the request's bearer token, so
 * it is verified exactly as any other JWT (issuer, audience, signature, scopes).
 */
export class OidcSignIn {
  readonly #options: OidcSignInOptions
  readonly #now: () => number
  #configuration: Promise<client.Configuration> | undefined
  /** Refreshes in flight, by session: concurrent page requests share one (refresh tokens may rotate). */
  readonly #refreshing = new Map<string, Promise<string | undefined>>()

  constructor (options: OidcSignInOptions) {
    this.#options = options
    this.#now = options.now ?? Date.now
  }

  get sessionTtlMs (): number {
    return this.#options.sessionTtlMs
  }

  /** Where to send the browser, and the id of this sign-in (for an HttpOnly cookie). */
  async begin (redirectUri: string): Promise<{ flowId: string, url: string }> {
    const configuration = await this.#discovered()
    const verifier = client.randomPKCECodeVerifier()
    const flow = { verifier, state: client.randomState(), nonce: client.randomNonce(), redirectUri }
    const url = client.buildAuthorizationUrl(configuration, {
      redirect_uri: redirectUri,
      scope: this.#options.scope,
      code_challenge: await client.calculatePKCECodeChallenge(verifier),
      code_challenge_method: 'S256',
      state: flow.state,
      nonce: flow.nonce,
    })
    const flowId = randomId()
    await this.#options.store.set(FLOW + flowId, flow, FLOW_TTL_MS)
    return { flowId, url: url.href }
  }

  /**
   * Finish the sign-in the issuer redirected back to `callbackUrl`: the session id, or a
   * thrown error (unknown or used flow, wrong state, a refused code).
   */
  async finish (flowId: string, callbackUrl: URL): Promise<string> {
    const flow = Flow.safeParse(await this.#options.store.get(FLOW + flowId))
    await this.#options.store.delete(FLOW + flowId) // one use, whatever happens next
    if (!flow.success) throw new GatewayError('TOOLGATE_UNAUTHENTICATED', 'this sign-in is unknown or was already used: start again')
    const configuration = await this.#discovered()
    const tokens = await client.authorizationCodeGrant(configuration, callbackUrl, {
      pkceCodeVerifier: flow.data.verifier,
      expectedState: flow.data.state,
      expectedNonce: flow.data.nonce,
    })
    const now = this.#now()
    const session: Session = { ...tokenFields(tokens, now), endsAt: now + this.#options.sessionTtlMs }
    const sessionId = randomId()
    await this.#options.store.set(SESSION + sessionId, session, this.#options.sessionTtlMs)
    return sessionId
  }

  /** The session's access token, refreshed when it is about to expire; undefined once the session is over. */
  async accessToken (sessionId: string): Promise<string | undefined> {
    const parsed = Session.safeParse(await this.#options.store.get(SESSION + sessionId))
    if (!parsed.success) return undefined
    const session = parsed.data
    const now = this.#now()
    if (session.endsAt <= now) {
      await this.#options.store.delete(SESSION + sessionId)
      return undefined
    }
    if (session.expiresAt - REFRESH_AHEAD_MS > now) return session.accessToken
    let refreshing = this.#refreshing.get(sessionId)
    if (refreshing === undefined) {
      refreshing = this.#refresh(sessionId, session).finally(() => { this.#refreshing.delete(sessionId) })
      this.#refreshing.set(sessionId, refreshing)
    }
    return await refreshing
  }

  /** Sign out: the session is forgotten at once, its refresh token revoked at the issuer when it can be. */
  async end (sessionId: string): Promise<void> {
    const parsed = Session.safeParse(await this.#options.store.get(SESSION + sessionId))
    await this.#options.store.delete(SESSION + sessionId)
    if (!parsed.success) return
    const configuration = await this.#discovered().catch(() => undefined)
    if (configuration?.serverMetadata().revocation_endpoint === undefined) return
    for (const token of [parsed.data.refreshToken, parsed.data.accessToken]) {
      if (token !== undefined) await client.tokenRevocation(configuration, token).catch(() => {})
    }
  }

  async #refresh (sessionId: string, session: Session): Promise<string | undefined> {
    if (session.refreshToken === undefined) {
      await this.#options.store.delete(SESSION + sessionId)
      return undefined
    }
    const configuration = await this.#discovered()
    let tokens
    try {
      tokens = await client.refreshTokenGrant(configuration, session.refreshToken)
    } catch (error) {
      if (!(error instanceof client.ResponseBodyError)) {
        // The issuer is unreachable or answered garbage: keep the session, this request is a 503.
        throw new GatewayError('TOOLGATE_UNAVAILABLE', 'the sign-in issuer cannot refresh the session now; retry shortly', { retryAfter: 5 }, { cause: error })
      }
      await this.#options.store.delete(SESSION + sessionId) // refused (revoked, expired): sign in again
      return undefined
    }
    const now = this.#now()
    const next: Session = { ...tokenFields(tokens, now), refreshToken: tokens.refresh_token ?? session.refreshToken, endsAt: session.endsAt }
    await this.#options.store.set(SESSION + sessionId, next, session.endsAt - now)
    return next.accessToken
  }

  /**
   * At start-up: the issuer discovered once. A setting that cannot work (no OpenID issuer there,
   * another issuer's metadata, plain http off this machine) throws a `ConfigError` naming it;
   * an issuer that cannot be reached now (down, 5xx, slow) answers why, and the first sign-in
   * asks again.
   */
  async check (): Promise<string | undefined> {
    try {
      const configuration = await discover(this.#options)
      this.#configuration = Promise.resolve(configuration)
      return undefined
    } catch (error) {
      if (isOutage(error)) return (error as Error).message
      throw new ConfigError(`invalid setting "JWT_ISSUER" for the approvals page's sign-in (APPROVALS_OIDC_CLIENT_ID is set): ${this.#options.issuer} ${whyNot(error)}`)
    }
  }

  /** Discovered once; a failure is retried by the next sign-in instead of being remembered. */
  async #discovered (): Promise<client.Configuration> {
    this.#configuration ??= discover(this.#options).catch((error: unknown) => {
      this.#configuration = undefined
      throw new GatewayError('TOOLGATE_UNAVAILABLE', 'the sign-in issuer cannot be reached; retry shortly', { retryAfter: 5 }, { cause: error })
    })
    return await this.#configuration
  }
}

async function discover (options: OidcSignInOptions): Promise<client.Configuration> {
  const issuer = new URL(options.issuer)
  const auth = options.clientSecret === undefined ? client.None() : client.ClientSecretBasic(options.clientSecret)
  // Plain http only for an issuer on this machine (a development or test provider): any loopback address.
  const insecure = issuer.protocol === 'http:' && isLoopback(issuer.hostname)
  return await client.discovery(issuer, options.clientId, undefined, auth, { timeout: 10, ...(insecure ? { execute: [client.allowInsecureRequests] } : {}) })
}

/** The issuer is there but cannot answer now: the network, a timeout, a 5xx or 429. */
function isOutage (error: unknown): boolean {
  if (error instanceof TypeError || (error instanceof Error && (error.name === 'TimeoutError' || error.name === 'AbortError'))) return true
  const status = error instanceof client.ClientError && error.cause instanceof Response ? error.cause.status : undefined
  return status !== undefined && (status >= 500 || status === 429)
}

function whyNot (error: unknown): string {
  if (!(error instanceof client.ClientError)) return `cannot be used: ${error instanceof Error ? error.message : String(error)}`
  if (error.code === 'OAUTH_HTTP_REQUEST_FORBIDDEN') return 'is plain http off this machine: an issuer must be https (http only on loopback)'
  if (error.code === 'OAUTH_JSON_ATTRIBUTE_COMPARISON_FAILED') return 'serves the metadata of another issuer (its "issuer" differs): set JWT_ISSUER to exactly the issuer it names'
  if (error.cause instanceof Response) return `answers ${error.cause.status} at /.well-known/openid-configuration: it is no OpenID Connect issuer`
  return `is no OpenID Connect issuer: ${error.message}`
}

function tokenFields (tokens: client.TokenEndpointResponse, now: number): Omit<Session, 'endsAt'> {
  return {
    accessToken: tokens.access_token,
    ...(tokens.refresh_token === undefined ? {} : { refreshToken: tokens.refresh_token }),
    expiresAt: now + (tokens.expires_in === undefined ? DEFAULT_TOKEN_MS : tokens.expires_in * 1000),
  }
}

function randomId (): string {
  return randomBytes(32).toString('base64url')
}
