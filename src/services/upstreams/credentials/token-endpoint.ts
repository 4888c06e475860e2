import * as client from 'openid-client'
import { isLoopback } from '../../loopback.js'
import type { TokenClientConfig } from './declaration.js'

/*
 * One OAuth client at one authorization server, by openid-client: the client credentials
 * grant (RFC 6749 section 4.4) and token exchange (RFC 8693). The server's metadata is
 * discovered once (a failure is asked again next time); every request is bounded by
 * `timeoutMs`. Failures come back as `TokenFailure` kinds: whether the server could not be
 * reached (try later) or refused (a fix is needed), which the credential maps to answers.
 */

export interface Token {
  readonly value: string
  /** Epoch ms. */
  readonly expiresAt: number
}

export type TokenFailureKind =
  /** Unreachable, slow, 5xx or 429: nothing is wrong with the request. */
  | 'unavailable'
  /** The server answered an OAuth error: the client, the grant or the subject token is refused. */
  | 'refused'

export class TokenFailure extends Error {
  constructor (readonly kind: TokenFailureKind, message: string, options?: ErrorOptions & { readonly oauthError?: string, readonly waited?: boolean }) {
    super(message, options)
    this.name = 'TokenFailure'
    this.oauthError = options?.oauthError
    this.waited = options?.waited === true
  }

  /** Only this call gave up waiting (its own share of its timeout): the endpoint itself may be fine. */
  readonly waited: boolean

  /** The server's OAuth error code (`invalid_grant`, `invalid_client`...), when it answered one. */
  readonly oauthError: string | undefined
}

const TOKEN_EXCHANGE = 'urn:ietf:params:oauth:grant-type:token-exchange'
const ACCESS_TOKEN_TYPE = 'urn:ietf:params:oauth:token-type:access_token'
/** Without `expires_in`, a token is trusted for this long. */
const DEFAULT_TOKEN_MS = 5 * 60_000

export class TokenEndpoint {
  readonly #config: TokenClientConfig
  readonly #timeoutMs: number
  readonly #now: () => number
  #configuration: Promise<client.Configuration> | undefined

  constructor (config: TokenClientConfig, timeoutMs: number, now: () => number = Date.now) {
    this.#config = config
    this.#timeoutMs = timeoutMs
    this.#now = now
  }

  /** Where tokens come from, for messages: the issuer or the token endpoint. */
  get where (): string {
    return this.#config.issuer ?? this.#config.tokenEndpoint!
  }

  /** The gateway's own token (client credentials), for `resource` when the client names none of its own. */
  async clientCredentials (resource?: string): Promise<Token> {
    const parameters: Record<string, string> = {}
    if (this.#config.scope !== undefined) parameters.scope = this.#config.scope
    const target = this.#config.resource ?? resource
    if (target !== undefined) parameters.resource = target
    return await this.#grant(async configuration => await client.clientCredentialsGrant(configuration, parameters))
  }

  /** `subjectToken` (the caller's access token) exchanged for one meant for `audience`. */
  async exchange (subjectToken: string, audience: string | undefined): Promise<Token> {
    const parameters: Record<string, string> = { subject_token: subjectToken, subject_token_type: ACCESS_TOKEN_TYPE, requested_token_type: ACCESS_TOKEN_TYPE }
    if (audience !== undefined) parameters.audience = audience
    if (this.#config.scope !== undefined) parameters.scope = this.#config.scope
    if (this.#config.resource !== undefined) parameters.resource = this.#config.resource
    return await this.#grant(async configuration => await client.genericGrantRequest(configuration, TOKEN_EXCHANGE, parameters))
  }

  /** Where to send a person's browser to link their account: authorization code with PKCE (S256) and `state`. */
  async authorizationUrl (redirectUri: string, state: string, verifier: string): Promise<string> {
    const configuration = await this.#discovered()
    const parameters: Record<string, string> = {
      redirect_uri: redirectUri,
      response_type: 'code',
      state,
      code_challenge: await client.calculatePKCECodeChallenge(verifier),
      code_challenge_method: 'S256',
    }
    if (this.#config.scope !== undefined) parameters.scope = this.#config.scope
    if (this.#config.resource !== undefined) parameters.resource = this.#config.resource
    return client.buildAuthorizationUrl(configuration, parameters).href
  }

  /** The code the browser came back with (`callback`, the whole URL), exchanged; its `state` checked. */
  async codeGrant (callback: URL, verifier: string, state: string): Promise<Token & { readonly refreshToken?: string }> {
    const configuration = await this.#discovered()
    try {
      const tokens = await client.authorizationCodeGrant(configuration, callback, { pkceCodeVerifier: verifier, expectedState: state, idTokenExpected: false }, this.#config.resource === undefined ? undefined : { resource: this.#config.resource })
      return { ...this.#tokenOf(tokens), ...(tokens.refresh_token === undefined ? {} : { refreshToken: tokens.refresh_token }) }
    } catch (error) {
      throw failureOf(error, `the token endpoint of ${this.where}`)
    }
  }

  /** A new access token for a refresh token (which may come back rotated). */
  async refresh (refreshToken: string): Promise<Token & { readonly refreshToken?: string }> {
    const configuration = await this.#discovered()
    try {
      const tokens = await client.refreshTokenGrant(configuration, refreshToken, this.#config.resource === undefined ? undefined : { resource: this.#config.resource })
      return { ...this.#tokenOf(tokens), ...(tokens.refresh_token === undefined ? {} : { refreshToken: tokens.refresh_token }) }
    } catch (error) {
      throw failureOf(error, `the token endpoint of ${this.where}`)
    }
  }

  /** Revoke a refresh token at the server, when it has a revocation endpoint (RFC 7009); best effort. */
  async revoke (refreshToken: string): Promise<void> {
    const configuration = await this.#discovered()
    if (configuration.serverMetadata().revocation_endpoint === undefined) return
    await client.tokenRevocation(configuration, refreshToken, { token_type_hint: 'refresh_token' })
  }

  /** At start-up: undefined when the server's metadata reads, else why not (a `TokenFailure`). */
  async check (): Promise<TokenFailure | undefined> {
    try {
      await this.#discovered()
      return undefined
    } catch (error) {
      return error as TokenFailure
    }
  }

  async #grant (request: (configuration: client.Configuration) => Promise<client.TokenEndpointResponse>): Promise<Token> {
    const configuration = await this.#discovered()
    let tokens: client.TokenEndpointResponse
    try {
      tokens = await request(configuration)
    } catch (error) {
      throw failureOf(error, `the token endpoint of ${this.where}`)
    }
    return this.#tokenOf(tokens)
  }

  #tokenOf (tokens: client.TokenEndpointResponse): Token {
    return { value: tokens.access_token, expiresAt: this.#now() + (tokens.expires_in === undefined ? DEFAULT_TOKEN_MS : tokens.expires_in * 1000) }
  }

  async #discovered (): Promise<client.Configuration> {
    this.#configuration ??= this.#configure().catch((error: unknown) => {
      this.#configuration = undefined
      throw failureOf(error, this.where)
    })
    return await this.#configuration
  }

  async #configure (): Promise<client.Configuration> {
    const { issuer, tokenEndpoint, clientId, clientSecret, clientAuth } = this.#config
    const auth = clientSecret === undefined ? client.None() : clientAuth === 'client_secret_post' ? client.ClientSecretPost(clientSecret) : client.ClientSecretBasic(clientSecret)
    const url = new URL(issuer ?? tokenEndpoint!)
    // Plain http only to this machine (a development or test server); the declaration refused it elsewhere.
    const insecure = url.protocol === 'http:' && isLoopback(url.hostname)
    const timeout = Math.max(1, Math.ceil(this.#timeoutMs / 1000))
    let configuration: client.Configuration
    if (issuer !== undefined) {
      // OpenID Connect discovery first, then OAuth's own metadata (RFC 8414) for servers that serve only that.
      const discover = async (algorithm: 'oidc' | 'oauth2'): Promise<client.Configuration> => await client.discovery(url, clientId, undefined, auth, { algorithm, timeout, ...(insecure ? { execute: [client.allowInsecureRequests] } : {}) })
      configuration = await discover('oidc').catch(async (error: unknown) => {
        if (isNotFound(error)) return await discover('oauth2')
        throw error
      })
    } else {
      configuration = new client.Configuration({ issuer: url.origin, token_endpoint: url.href }, clientId, undefined, auth)
      if (insecure) client.allowInsecureRequests(configuration)
    }
    configuration.timeout = timeout
    return configuration
  }
}

function isNotFound (error: unknown): boolean {
  return error instanceof client.ClientError && error.cause instanceof Response && error.cause.status === 404
}

/** What went wrong at the authorization server, without anything secret in it. */
function failureOf (error: unknown, where: string): TokenFailure {
  if (error instanceof TokenFailure) return error
  if (error instanceof client.ResponseBodyError) {
    const unavailable = error.status >= 500 || error.status === 429
    const said = `${error.error}${error.error_description === undefined ? '' : `: ${error.error_description.slice(0, 300)}`}`
    return new TokenFailure(unavailable ? 'unavailable' : 'refused', `${where} answered ${error.status} (${said})`, { cause: error, oauthError: error.error })
  }
  if (error instanceof TypeError || (error instanceof Error && (error.name === 'TimeoutError' || error.name === 'AbortError'))) {
    return new TokenFailure('unavailable', `${where} cannot be reached (${error.name === 'TimeoutError' ? 'timed out' : error.message})`, { cause: error })
  }
  if (error instanceof client.ClientError && error.cause instanceof Response) {
    const status = error.cause.status
    return new TokenFailure(status >= 500 || status === 429 ? 'unavailable' : 'refused', `${where} answered ${status}: ${error.message}`, { cause: error })
  }
  return new TokenFailure('refused', `${where} cannot be used: ${error instanceof Error ? error.message : String(error)}`, { cause: error })
}
