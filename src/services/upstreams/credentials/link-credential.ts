import { createHash, randomBytes } from 'node:crypto'
import type { Principal } from '../../../core/app-context.js'
import { UpstreamError } from '../../../core/errors.js'
import type { KeyedStore } from '../../keyed-store.js'
import { clientRefused, rejectedByUpstream, tokenUnavailable, type Applied, type CredentialDeps, type UpstreamCredential } from './credential.js'
import type { LinkClientConfig } from './declaration.js'
import { completeLinkClient } from './link-client.js'
import { TokenCache, type SharedTokens } from './token-cache.js'
import { TokenEndpoint, TokenFailure, type Token } from './token-endpoint.js'

/*
 * A person's own account at the upstream, linked once in the browser: authorization code with
 * PKCE against the upstream's authorization server, begun and finished by the connections page.
 * The link keeps the refresh token (sealed in Redis, or in this process); access tokens are kept
 * like every token (fetched once however many calls wait, across replicas too, which matters
 * here: a rotated refresh token used twice is revoked). A refresh token the issuer refuses
 * breaks the link, and the next call asks the person to link again.
 */

export type LinkState = 'linked' | 'broken'

/** What a link keeps. Never shown: the page sees `state` and `linkedAt`. */
interface LinkRecord {
  readonly state: LinkState
  readonly refreshToken?: string
  readonly linkedAt: number
  /** Why a link broke. */
  readonly why?: string
}

interface Flow {
  readonly upstream: string
  readonly principal: string
  readonly verifier: string
  readonly redirectUri: string
}

export interface LinkDeps extends CredentialDeps {
  readonly links: KeyedStore
  readonly flows: KeyedStore
  /** Where a person links their accounts (the connections page), for the answer to a call that needs one. */
  readonly connectionsUrl: string
  /** The connections page's callback: the redirect URI of a client the gateway registers. */
  readonly callbackUrl: string
  /** A remote MCP server's URL: where its authorization server is found when the file names none. */
  readonly serverUrl?: string
  readonly linkEvent: (event: 'linked' | 'unlinked' | 'broken' | 'refreshed') => void
  /** A link changed state (made: from undefined; removed: to undefined), for the links gauge. */
  readonly linkState: (from: LinkState | undefined, to: LinkState | undefined) => void
}

/** A link lasts this long without a call refreshing it. */
const LINK_TTL_MS = 180 * 24 * 60 * 60_000
/** How long a person may take at the authorization server. */
const FLOW_TTL_MS = 10 * 60_000

export class LinkCredential implements UpstreamCredential {
  readonly mode = 'link'
  readonly headerNames = ['authorization']
  readonly upstream: string
  readonly #client: LinkClientConfig
  readonly #cache: TokenCache
  readonly #deps: LinkDeps
  /** Found (the issuer) and registered (the client) on first use, when the file names neither. */
  #namespace: string | undefined
  #resolved: Promise<{ readonly endpoint: TokenEndpoint, readonly hasSecret: boolean, readonly registered: boolean }> | undefined

  constructor (client: LinkClientConfig, deps: LinkDeps, shared?: SharedTokens) {
    this.upstream = deps.upstream
    this.#client = client
    this.#deps = deps
    this.#cache = new TokenCache({ ...(shared === undefined ? {} : { shared }), ...(deps.now === undefined ? {} : { now: deps.now }) })
  }

  async check (): Promise<TokenFailure | undefined> {
    try {
      return await (await this.#ready()).endpoint.check()
    } catch (error) {
      if (error instanceof TokenFailure) return error
      throw error
    }
  }

  /**
   * A token's key: the upstream, and what its tokens are asked with (so a changed issuer or
   * client never reuses a kept token), then whose.
   */
  #keyOf (who: string): string {
    this.#namespace ??= `${this.upstream}\nlink\n${createHash('sha256').update(JSON.stringify({ ...this.#client, clientSecret: undefined })).digest('base64url')}\n`
    return this.#namespace + who
  }

  /** The token endpoint, once the issuer is found and the client registered (a failure is tried again next time). */
  async #ready (): Promise<{ readonly endpoint: TokenEndpoint, readonly hasSecret: boolean, readonly registered: boolean }> {
    this.#resolved ??= (async () => {
      const timeoutMs = this.#deps.tokenTimeoutMs ?? 10_000
      const client = await completeLinkClient({ upstream: this.upstream, config: this.#client, ...(this.#deps.serverUrl === undefined ? {} : { serverUrl: this.#deps.serverUrl }), redirectUri: this.#deps.callbackUrl, store: this.#deps.links, timeoutMs })
      return { endpoint: new TokenEndpoint(client, timeoutMs, this.#deps.now), hasSecret: client.clientSecret !== undefined, registered: client.registered }
    })().catch((error: unknown) => {
      this.#resolved = undefined
      throw error
    })
    return await this.#resolved
  }

  async #endpoint (): Promise<TokenEndpoint> {
    return (await this.#ready()).endpoint
  }

  apply (principal: Principal | undefined, waitMs: number): Applied | Promise<Applied> {
    // The gateway's own requests (connecting, listing): its client's own token when it has a secret, else the static headers alone.
    if (principal === undefined) return this.#gatewayOwn(waitMs)
    const key = this.#keyOf(principal.id)
    const refetch = async (): Promise<Applied> => {
      // Refused: a kept access token revoked since. Once more with a refreshed one; refused again is the upstream's 502.
      await this.#cache.forget(key)
      return this.#bearer(await this.#obtain(key, waitMs, async () => await this.#refresh(principal.id)), async () => {
        await this.#cache.forget(key)
        throw this.#rejected()
      })
    }
    const kept = this.#cache.kept(key)
    if (kept !== undefined) return this.#bearer(kept, refetch)
    return this.#obtain(key, waitMs, async () => await this.#refresh(principal.id)).then(token => this.#bearer(token, refetch))
  }

  async #gatewayOwn (waitMs: number): Promise<Applied> {
    const refused = async (): Promise<Applied> => { throw this.#rejected() }
    const { endpoint, hasSecret } = await this.#ready().catch((error: unknown) => { throw this.#failed(error) })
    if (!hasSecret) return { headers: {}, refused }
    return this.#bearer(await this.#obtain(this.#keyOf('\0gateway'), waitMs, async () => await endpoint.clientCredentials()), refused)
  }

  /** Where `principal`'s browser goes to link: the authorization server's URL, and the flow's id (its `state`, bound to the browser by a cookie). */
  async begin (principal: Principal, redirectUri: string): Promise<{ readonly url: string, readonly flowId: string }> {
    const state = randomBytes(32).toString('base64url')
    const verifier = randomBytes(32).toString('base64url')
    const { endpoint, registered } = await this.#ready().catch((error: unknown) => { throw this.#failed(error) })
    // A client the gateway registered knows one redirect URI: the public one.
    const to = registered ? this.#deps.callbackUrl : redirectUri
    await this.#deps.flows.set(state, { upstream: this.upstream, principal: principal.id, verifier, redirectUri: to } satisfies Flow, FLOW_TTL_MS)
    return { url: await endpoint.authorizationUrl(to, state, verifier), flowId: state }
  }

  /**
   * The browser came back (`callback`, the whole URL) from a flow this browser began
   * (`flowId`, its cookie): the code exchanged and the link kept, for the principal who began it.
   * Throws an `Error` saying why not (the page shows it).
   */
  async finish (flowId: string, callback: URL): Promise<{ readonly principal: string }> {
    const flow = await this.#deps.flows.get(flowId) as Flow | undefined
    if (flow === undefined || flow.upstream !== this.upstream) throw new Error('this link was not begun here, or took longer than ten minutes; begin again')
    await this.#deps.flows.delete(flowId)
    const error = callback.searchParams.get('error')
    if (error !== null) throw new Error(`the authorization server said ${error.slice(0, 100)}`)
    const endpoint = await this.#endpoint()
    // The redirect URI the flow asked with (openid-client takes it from the URL it is given), the query the server sent back.
    const answered = new URL(flow.redirectUri)
    answered.search = callback.search
    const tokens = await endpoint.codeGrant(answered, flow.verifier, flowId)
    const previous = await this.#deps.links.get(linkId(this.upstream, flow.principal)) as LinkRecord | undefined
    await this.#deps.links.set(linkId(this.upstream, flow.principal), { state: 'linked', ...(tokens.refreshToken === undefined ? {} : { refreshToken: tokens.refreshToken }), linkedAt: Date.now() } satisfies LinkRecord, LINK_TTL_MS)
    await this.#cache.put(this.#keyOf(flow.principal), { value: tokens.value, expiresAt: tokens.expiresAt })
    if (previous?.refreshToken !== undefined) await endpoint.revoke(previous.refreshToken).catch(() => undefined)
    this.#deps.linkEvent('linked')
    this.#deps.linkState(previous?.state, 'linked')
    return { principal: flow.principal }
  }

  /** Whether the flow `flowId` is one of this upstream's. */
  async owns (flowId: string): Promise<boolean> {
    return (await this.#deps.flows.get(flowId) as Flow | undefined)?.upstream === this.upstream
  }

  /** What the page shows of `principal`'s link: its state and when it was made, never a token. */
  async status (principal: Principal): Promise<{ readonly state: LinkState | 'unlinked', readonly linkedAt?: number, readonly why?: string }> {
    const record = await this.#deps.links.get(linkId(this.upstream, principal.id)) as LinkRecord | undefined
    if (record === undefined) return { state: 'unlinked' }
    return { state: record.state, linkedAt: record.linkedAt, ...(record.why === undefined ? {} : { why: record.why }) }
  }

  /** Forget `principal`'s link here and revoke its refresh token at the issuer (best effort). */
  async unlink (principal: Principal): Promise<boolean> {
    const id = linkId(this.upstream, principal.id)
    const record = await this.#deps.links.get(id) as LinkRecord | undefined
    if (record === undefined) return false
    await this.#deps.links.delete(id)
    await this.#cache.forget(this.#keyOf(principal.id))
    if (record.refreshToken !== undefined) await (await this.#endpoint()).revoke(record.refreshToken).catch(() => undefined)
    this.#deps.linkEvent('unlinked')
    this.#deps.linkState(record.state, undefined)
    return true
  }

  async #refresh (principal: string): Promise<Token> {
    const id = linkId(this.upstream, principal)
    const record = await this.#deps.links.get(id) as LinkRecord | undefined
    if (record === undefined || record.state !== 'linked') throw new LinkNeeded(record === undefined ? 'unlinked' : 'broken')
    if (record.refreshToken === undefined) return await this.#break(id, record, 'the authorization server gave no refresh token, and the access token expired')
    const endpoint = await this.#endpoint()
    let refreshed
    try {
      refreshed = await endpoint.refresh(record.refreshToken)
    } catch (error) {
      // Only the grant refused (revoked, expired) breaks the link; the gateway's client refused is the operator's to fix, and the link stays.
      if (error instanceof TokenFailure && error.kind === 'refused' && error.oauthError === 'invalid_grant') return await this.#break(id, record, 'the authorization server refused the refresh token (invalid_grant): revoked or expired')
      throw error
    }
    // Unlinked or linked anew meanwhile: this refresh is spent, and the link as it is now stands.
    const now = await this.#deps.links.get(id) as LinkRecord | undefined
    if (now?.linkedAt !== record.linkedAt || now.state !== 'linked') {
      if (refreshed.refreshToken !== undefined) await endpoint.revoke(refreshed.refreshToken).catch(() => undefined)
      throw new LinkNeeded(now === undefined ? 'unlinked' : now.state === 'broken' ? 'broken' : 'unlinked')
    }
    // A rotated refresh token replaces the old one, which the server has now spent.
    await this.#deps.links.set(id, { ...record, refreshToken: refreshed.refreshToken ?? record.refreshToken } satisfies LinkRecord, LINK_TTL_MS)
    this.#deps.linkEvent('refreshed')
    this.#deps.events.fetched()
    return { value: refreshed.value, expiresAt: refreshed.expiresAt }
  }

  async #break (id: string, record: LinkRecord, why: string): Promise<never> {
    const { refreshToken: _spent, ...rest } = record
    await this.#deps.links.set(id, { ...rest, state: 'broken', why } satisfies LinkRecord, LINK_TTL_MS)
    this.#deps.linkEvent('broken')
    this.#deps.linkState(record.state, 'broken')
    throw new LinkNeeded('broken')
  }

  async #obtain (key: string, waitMs: number, fetch: () => Promise<Token>): Promise<Token> {
    const { upstream, events } = this.#deps
    try {
      return (await this.#cache.get(key, fetch, waitMs)).token
    } catch (error) {
      if (error instanceof LinkNeeded) {
        events.failed('link_required')
        throw new UpstreamError('TOOLGATE_LINK_REQUIRED', `upstream "${upstream}" is reached with your own account there, which ${error.state === 'broken' ? 'needs linking again (the link broke)' : 'is not linked yet'}: link it at ${this.#deps.connectionsUrl}, then retry`, { upstream, link: error.state, linkUrl: this.#deps.connectionsUrl })
      }
      throw this.#failed(error)
    }
  }

  /** A failure to get a token, as the caller's error: the issuer down (503) or refusing the gateway's client (502). */
  #failed (error: unknown): unknown {
    const { upstream, events } = this.#deps
    if (!(error instanceof TokenFailure)) return error
    events.failed(error.kind)
    return error.kind === 'unavailable' ? tokenUnavailable(upstream, error, 2) : clientRefused(upstream, error)
  }

  #bearer (token: Token, refused: () => Promise<Applied>): Applied {
    return { headers: { authorization: `Bearer ${token.value}` }, refused }
  }

  #rejected (): UpstreamError {
    this.#deps.events.failed('rejected_by_upstream')
    return rejectedByUpstream(this.upstream, this.mode)
  }
}

class LinkNeeded extends Error {
  constructor (readonly state: 'unlinked' | 'broken') {
    super(`link ${state}`)
  }
}

function linkId (upstream: string, principal: string): string {
  return `link\n${upstream}\n${principal}`
}


