import { createHash } from 'node:crypto'
import type { Principal } from '../../../core/app-context.js'
import { UpstreamError } from '../../../core/errors.js'
import { bearerOf } from '../../auth/caller-tokens.js'
import type { AuthConfig } from './declaration.js'
import type { GatewaySigner } from './gateway-signer.js'
import { TokenCache, type Obtained, type SharedTokens } from './token-cache.js'
import { TokenEndpoint, TokenFailure, type Token } from './token-endpoint.js'

/*
 * An upstream's credential, one per upstream: the headers one request carries, made for the
 * caller of the call it belongs to (or for the gateway itself, for its own requests: connecting,
 * listing). It is one more thing a call is bound to, applied where the request is sent, after
 * every check of the pipeline: a call refused, planned, dry-run or replayed never gets one.
 */

export interface Applied {
  readonly headers: Readonly<Record<string, string>>
  /**
   * The upstream answered 401 to `headers`. The token is dropped; a token that was kept (it may
   * have been revoked since) is fetched anew once and the headers to try with are returned; a
   * token just obtained means the upstream refuses what the issuer gives: a 502
   * `TOOLGATE_UPSTREAM_UNAUTHORIZED`.
   */
  readonly refused: () => Promise<Applied>
}

interface CredentialEvents {
  /** A token was obtained at the token endpoint. */
  readonly fetched: () => void
  /** Why a credential could not be had, or was refused: `unavailable`, `refused`, `not_exchangeable`, `rejected_by_upstream`. */
  readonly failed: (reason: string) => void
  readonly log: (level: 'warn' | 'error', object: object, message: string) => void
}

export interface UpstreamCredential {
  readonly mode: AuthConfig['type']
  /** The header names it sets: what a dry run shows as `[redacted]`. */
  readonly headerNames: readonly string[]
  /**
   * The headers for one request on behalf of `principal` (undefined: the gateway's own), within
   * `waitMs`. Synchronous when nothing has to be fetched. Throws the caller's `UpstreamError`.
   */
  apply (principal: Principal | undefined, waitMs: number): Applied | Promise<Applied>
  /** At start-up: the issuer's metadata reads (undefined), or why not. */
  check (): Promise<TokenFailure | undefined>
}

export interface CredentialDeps {
  readonly upstream: string
  readonly events: CredentialEvents
  readonly shared?: SharedTokens
  readonly signer?: GatewaySigner
  /** How long one request to the token endpoint may take. */
  readonly tokenTimeoutMs?: number
  readonly now?: () => number
}

/** The gateway's own requests of an identity-mode upstream are made as this principal. */
const GATEWAY: Principal = Object.freeze({ id: 'toolgate', scopes: Object.freeze([]), via: 'anonymous' })
/** After the token endpoint failed to answer, calls are refused at once for this long (it is not asked by every call). */
const COOL_DOWN_MS = 2_000
/** OAuth errors that say the caller's token cannot be exchanged, not that the gateway's client is wrong. */
const CALLERS_FAULT = new Set(['invalid_grant', 'access_denied'])
const SERVICE_KEY = '\0service'
/** Principals whose signed identity is kept at once. */
const MAX_SIGNED = 10_000
/** However long a tool may run, a token endpoint that has not answered in this long is down. */
const MAX_TOKEN_WAIT_MS = 10_000

/** No token (the endpoint down or slow): 503, nothing sent upstream. */
export function tokenUnavailable (upstream: string, failure: TokenFailure, retryAfter: number): UpstreamError {
  return new UpstreamError('TOOLGATE_CREDENTIAL_UNAVAILABLE', `no token for upstream "${upstream}": ${failure.message}; nothing was sent upstream; retry after ${retryAfter} s`, { retryAfter, upstream }, { cause: failure })
}

/** The issuer refused the gateway's own client: the operator's to fix, 502. */
export function clientRefused (upstream: string, failure: TokenFailure): UpstreamError {
  return new UpstreamError('TOOLGATE_UPSTREAM_CREDENTIAL_FAILED', `the issuer refused the gateway's client for upstream "${upstream}": ${failure.message}`, { upstream }, { cause: failure })
}

/** The upstream refused a token just obtained for it: 502, the token dropped. */
export function rejectedByUpstream (upstream: string, mode: string): UpstreamError {
  return new UpstreamError('TOOLGATE_UPSTREAM_UNAUTHORIZED', `upstream "${upstream}" answered 401 to a token the gateway had just obtained for it (${mode}); nothing ran there, and the token was dropped`, { upstream })
}

/** The longest a call waits for its credential: most of its timeout, so a slow token endpoint is a 503 before the call is a 504. */
export function credentialWaitMs (toolTimeoutMs: number): number {
  return Math.min(MAX_TOKEN_WAIT_MS, Math.max(100, Math.floor(toolTimeoutMs * 0.8)))
}

/** The credential of a mode the gateway holds alone (a link's also needs the people's links: `LinkCredential`). */
export function credentialOf (auth: Exclude<AuthConfig, { type: 'link' }>, deps: CredentialDeps): UpstreamCredential {
  if (auth.type === 'identity') return new IdentityCredential(auth, deps)
  return new OAuthCredential(auth, deps)
}

class OAuthCredential implements UpstreamCredential {
  readonly mode: 'client_credentials' | 'token_exchange'
  readonly headerNames = ['authorization']
  readonly #endpoint: TokenEndpoint
  readonly #cache: TokenCache
  readonly #audience: string | undefined
  readonly #resource: string | undefined
  readonly #namespace: string
  readonly #deps: CredentialDeps
  readonly #now: () => number
  #downUntil = 0

  constructor (auth: Extract<AuthConfig, { type: 'client_credentials' | 'token_exchange' }>, deps: CredentialDeps) {
    this.mode = auth.type
    this.#audience = auth.type === 'token_exchange' ? auth.audience : undefined
    this.#resource = this.#audience !== undefined && URL.canParse(this.#audience) ? this.#audience : undefined
    this.#deps = deps
    this.#now = deps.now ?? Date.now
    this.#endpoint = new TokenEndpoint(auth.client, deps.tokenTimeoutMs ?? 10_000, this.#now)
    this.#cache = new TokenCache({ ...(deps.shared === undefined ? {} : { shared: deps.shared }), now: this.#now })
    // Shared keys name the upstream and what its tokens are asked with: replicas share a token
    // only for the same upstream, issuer, client and target, never one upstream's with another.
    const { clientSecret: _secret, ...asked } = auth.client
    this.#namespace = `${deps.upstream}\n${auth.type}\n${createHash('sha256').update(JSON.stringify({ ...asked, audience: this.#audience })).digest('base64url')}\n`
  }

  async check (): Promise<TokenFailure | undefined> {
    return await this.#endpoint.check()
  }

  apply (principal: Principal | undefined, waitMs: number): Applied | Promise<Applied> {
    // The gateway's own requests (and every request in client credentials mode) carry its own token.
    // In exchange mode, those are for the same upstream: its audience, when it is a URL, is the resource asked for.
    if (this.mode === 'client_credentials' || principal === undefined) return this.#applied(SERVICE_KEY, waitMs, async () => await this.#endpoint.clientCredentials(this.#resource))
    const subject = bearerOf(principal)
    if (subject === undefined) {
      this.#deps.events.failed('not_exchangeable')
      throw new UpstreamError('TOOLGATE_CREDENTIAL_NOT_EXCHANGEABLE', `upstream "${this.#deps.upstream}" is reached on behalf of the caller by token exchange, and "${principal.id}" came with ${principal.via === 'api-key' ? 'an API key' : 'no token'}: call with a bearer JWT of the gateway's issuer`, { upstream: this.#deps.upstream })
    }
    // Per principal and per token: a narrower token of the same person never reuses a broader one's exchange.
    const key = `${principal.id}\n${createHash('sha256').update(subject).digest('base64url')}`
    return this.#applied(key, waitMs, async () => await this.#endpoint.exchange(subject, this.#audience))
  }

  #applied (local: string, waitMs: number, fetch: () => Promise<Token>): Applied | Promise<Applied> {
    const key = this.#namespace + local
    const kept = this.#cache.kept(key)
    if (kept !== undefined) return this.#bearer(key, { token: kept, fresh: false }, waitMs, fetch)
    return this.#obtain(key, waitMs, fetch).then(obtained => this.#bearer(key, obtained, waitMs, fetch))
  }

  #bearer (key: string, obtained: Obtained, waitMs: number, fetch: () => Promise<Token>): Applied {
    return {
      headers: { authorization: `Bearer ${obtained.token.value}` },
      refused: async () => {
        await this.#cache.drop(key, obtained.token.value)
        if (obtained.fresh) throw this.#rejected()
        const again = await this.#obtain(key, waitMs, fetch)
        return { headers: { authorization: `Bearer ${again.token.value}` }, refused: async () => { await this.#cache.drop(key, again.token.value); throw this.#rejected() } }
      },
    }
  }

  async #obtain (key: string, waitMs: number, fetch: () => Promise<Token>): Promise<Obtained> {
    const { upstream, events } = this.#deps
    const wait = Math.ceil((this.#downUntil - this.#now()) / 1000)
    if (wait > 0) {
      events.failed('unavailable')
      throw new UpstreamError('TOOLGATE_CREDENTIAL_UNAVAILABLE', `the token endpoint for upstream "${upstream}" did not answer a moment ago; nothing was sent upstream; retry after ${wait} s`, { retryAfter: wait, upstream })
    }
    try {
      return await this.#cache.get(key, async () => {
        const token = await fetch()
        events.fetched()
        return token
      }, waitMs)
    } catch (error) {
      if (!(error instanceof TokenFailure)) throw error
      throw this.#failure(error)
    }
  }

  #failure (failure: TokenFailure): UpstreamError {
    const { upstream, events } = this.#deps
    if (failure.kind === 'unavailable') {
      // Only the endpoint's own failure cools every call down, not one call's short wait.
      if (!failure.waited) this.#downUntil = Math.max(this.#downUntil, this.#now() + COOL_DOWN_MS)
      events.failed('unavailable')
      events.log('warn', { upstream, mode: this.mode, reason: failure.message }, 'the token endpoint of an upstream did not answer; its calls answer 503 meanwhile')
      return tokenUnavailable(upstream, failure, COOL_DOWN_MS / 1000)
    }
    events.failed('refused')
    if (this.mode === 'token_exchange' && failure.oauthError !== undefined && CALLERS_FAULT.has(failure.oauthError)) {
      return new UpstreamError('TOOLGATE_CREDENTIAL_REFUSED', `the issuer would not exchange the caller's token for upstream "${upstream}": ${failure.message}`, { upstream }, { cause: failure })
    }
    events.log('error', { upstream, mode: this.mode, reason: failure.message }, 'the issuer refused the gateway\'s client for an upstream: fix its "auth" in the upstreams file')
    return clientRefused(upstream, failure)
  }

  #rejected (): UpstreamError {
    const { upstream, events } = this.#deps
    events.failed('rejected_by_upstream')
    return rejectedByUpstream(upstream, this.mode)
  }
}

class IdentityCredential implements UpstreamCredential {
  readonly mode = 'identity'
  readonly headerNames: readonly string[]
  readonly #auth: Extract<AuthConfig, { type: 'identity' }>
  readonly #deps: CredentialDeps
  readonly #now: () => number
  /** Signed tokens by principal, each used until half its life has passed. */
  readonly #signed = new Map<string, { readonly token: string, readonly until: number }>()

  constructor (auth: Extract<AuthConfig, { type: 'identity' }>, deps: CredentialDeps) {
    if (auth.jwt !== undefined && deps.signer === undefined) throw new Error('an identity credential with a JWT needs the gateway\'s signer')
    this.#auth = auth
    this.#deps = deps
    this.#now = deps.now ?? Date.now
    this.headerNames = [...Object.keys(auth.headers), ...(auth.jwt === undefined ? [] : [auth.jwt.header])].map(name => name.toLowerCase())
  }

  async check (): Promise<undefined> {
    return undefined
  }

  apply (principal: Principal | undefined, _waitMs: number): Applied | Promise<Applied> {
    const who = principal ?? GATEWAY
    const headers: Record<string, string> = {}
    for (const [name, template] of Object.entries(this.#auth.headers)) headers[name.toLowerCase()] = fill(template, who)
    const refused = async (): Promise<Applied> => {
      this.#deps.events.failed('rejected_by_upstream')
      throw new UpstreamError('TOOLGATE_UPSTREAM_UNAUTHORIZED', `upstream "${this.#deps.upstream}" answered 401 to the identity the gateway asserted for the caller; nothing ran there`, { upstream: this.#deps.upstream })
    }
    const jwt = this.#auth.jwt
    if (jwt === undefined) return { headers, refused }
    const name = jwt.header.toLowerCase()
    const put = (token: string): Applied => {
      headers[name] = name === 'authorization' ? `Bearer ${token}` : token
      return { headers, refused }
    }
    // One token per principal is used for the first half of its life: signing costs more than the rest of the call.
    const key = `${who.id}\n${who.via}\n${who.scopes.join(' ')}`
    const now = this.#now()
    const kept = this.#signed.get(key)
    if (kept !== undefined && kept.until > now) return put(kept.token)
    return this.#deps.signer!.sign({ issuer: jwt.issuer, audience: jwt.audience, subject: who.id, ttlSeconds: jwt.ttlSeconds, extra: { scope: who.scopes.join(' ') } }).then(token => {
      this.#signed.delete(key)
      this.#signed.set(key, { token, until: now + jwt.ttlSeconds * 500 })
      if (this.#signed.size > MAX_SIGNED) this.#signed.delete(this.#signed.keys().next().value!)
      return put(token)
    })
  }
}

/** `{principal.id}` and the rest filled in; anything but visible ASCII percent-encoded, so no value breaks a header. */
function fill (template: string, principal: Principal): string {
  return template.replace(/\{(principal\.(?:id|scopes|via))\}/g, (_match, field: string) => {
    const value = field === 'principal.id' ? principal.id : field === 'principal.scopes' ? principal.scopes.join(' ') : principal.via
    return value.replace(/[^\x20-\x7e]|%/g, char => encodeURIComponent(char))
  })
}
