import * as client from 'openid-client'
import { z } from 'zod'
import type { KeyedStore } from '../../keyed-store.js'
import { isLoopback } from '../../loopback.js'
import { urlProblem, type LinkClientConfig, type TokenClientConfig } from './declaration.js'
import { TokenFailure } from './token-endpoint.js'

/*
 * A link's client, complete: for a remote MCP server whose `auth` names no issuer, the issuer
 * is found as MCP clients find it (the server's protected resource metadata, RFC 9728, at its
 * path-suffixed address first, then its origin's); with no client declared, the gateway
 * registers one at that issuer (RFC 7591), once for every replica: the first registration
 * stored wins, and the others use it.
 */

const ProtectedResource = z.object({
  resource: z.string().min(1),
  authorization_servers: z.array(z.string().min(1)).min(1),
})

const Registered = z.object({ clientId: z.string().min(1), clientSecret: z.string().min(1).optional() })

/** Registrations are kept this long; a gateway that stays up re-reads, and re-registers only if it is gone. */
const REGISTRATION_TTL_MS = 365 * 24 * 60 * 60_000

export interface LinkClientSource {
  readonly upstream: string
  readonly config: LinkClientConfig
  /** The remote MCP server's URL, where its metadata is found. */
  readonly serverUrl?: string
  /** The connections page's callback, registered as the client's redirect URI. */
  readonly redirectUri: string
  readonly store: KeyedStore
  readonly timeoutMs: number
}

export async function completeLinkClient (source: LinkClientSource): Promise<TokenClientConfig & { readonly registered: boolean }> {
  let { issuer, resource } = source.config
  if (issuer === undefined) {
    const found = await protectedResourceOf(source.serverUrl!, source.timeoutMs)
    issuer = found.issuer
    resource ??= found.resource
  }
  const complete = { ...source.config, issuer, ...(resource === undefined ? {} : { resource }) }
  if (source.config.clientId !== undefined) return { ...complete, clientId: source.config.clientId, registered: false }
  const key = `client\n${source.upstream}\n${issuer}\n${source.redirectUri}`
  const kept = Registered.safeParse(await source.store.get(key))
  if (kept.success) return { ...complete, ...kept.data, registered: true }
  const registered = await register(issuer, source.redirectUri, source.config.scope, source.timeoutMs)
  // Another replica may have registered first: everyone uses the one stored. One stored that no key opens (a retired CREDENTIALS_KEY) is replaced.
  if (!await source.store.setIfAbsent(key, registered, REGISTRATION_TTL_MS) && await source.store.get(key) === undefined) await source.store.set(key, registered, REGISTRATION_TTL_MS)
  const winner = Registered.safeParse(await source.store.get(key))
  return { ...complete, ...(winner.success ? winner.data : registered), registered: true }
}

async function protectedResourceOf (serverUrl: string, timeoutMs: number): Promise<{ readonly issuer: string, readonly resource: string }> {
  const url = new URL(serverUrl)
  const path = url.pathname === '/' ? '' : url.pathname.replace(/\/$/, '')
  const addresses = [...new Set([`${url.origin}/.well-known/oauth-protected-resource${path}`, `${url.origin}/.well-known/oauth-protected-resource`])]
  for (const address of addresses) {
    let response: Response
    try {
      response = await fetch(address, { signal: AbortSignal.timeout(timeoutMs), redirect: 'error', headers: { accept: 'application/json' } })
    } catch (error) {
      throw new TokenFailure('unavailable', `the server's protected resource metadata (${address}) cannot be read: ${(error as Error).message}`, { cause: error })
    }
    // Not there (some servers guard every path, this one too): the next address.
    if (response.status === 404 || response.status === 401 || response.status === 403) {
      await response.body?.cancel()
      continue
    }
    if (response.status >= 500 || response.status === 429) throw new TokenFailure('unavailable', `${address} answered ${response.status}`)
    const parsed = ProtectedResource.safeParse(await response.json().catch(() => undefined))
    if (!response.ok || !parsed.success) throw new TokenFailure('refused', `${address} answered ${response.status} without protected resource metadata (resource, authorization_servers)`)
    // RFC 9728 section 3.3: the metadata is of this server, not of another resource (whose tokens would come here).
    if (!URL.canParse(parsed.data.resource) || new URL(parsed.data.resource).origin !== url.origin) throw new TokenFailure('refused', `${address} describes the resource ${parsed.data.resource.slice(0, 200)}, not this server`)
    const issuer = parsed.data.authorization_servers[0]!
    const problem = urlProblem(issuer)
    if (problem !== undefined) throw new TokenFailure('refused', `${address} names the authorization server ${issuer.slice(0, 200)}, which ${problem}`)
    return { issuer, resource: parsed.data.resource }
  }
  throw new TokenFailure('refused', `the server serves no protected resource metadata (not at ${addresses.join(', nor at ')}): declare its "issuer"`)
}

async function register (issuer: string, redirectUri: string, scope: string | undefined, timeoutMs: number): Promise<z.output<typeof Registered>> {
  const url = new URL(issuer)
  const insecure = url.protocol === 'http:' && isLoopback(url.hostname)
  try {
    const configuration = await client.dynamicClientRegistration(url, {
      client_name: 'toolgate',
      redirect_uris: [redirectUri],
      // Its own token too, when the server allows it: a linked MCP server is listed as the gateway.
      grant_types: ['authorization_code', 'refresh_token', 'client_credentials'],
      response_types: ['code'],
      token_endpoint_auth_method: 'client_secret_basic',
      ...(scope === undefined ? {} : { scope }),
    }, undefined, { timeout: Math.max(1, Math.ceil(timeoutMs / 1000)), ...(insecure ? { execute: [client.allowInsecureRequests] } : {}) })
    const metadata = configuration.clientMetadata()
    return { clientId: metadata.client_id, ...(typeof metadata.client_secret === 'string' ? { clientSecret: metadata.client_secret } : {}) }
  } catch (error) {
    if (error instanceof client.ResponseBodyError) throw new TokenFailure(error.status >= 500 ? 'unavailable' : 'refused', `registering a client at ${issuer} failed: ${error.error}${error.error_description === undefined ? '' : ` (${error.error_description.slice(0, 200)})`}`, { cause: error })
    if (error instanceof TypeError) throw new TokenFailure('unavailable', `${issuer} cannot be reached to register a client: ${error.message}`, { cause: error })
    throw new TokenFailure('refused', `registering a client at ${issuer} failed: ${(error as Error).message}`, { cause: error })
  }
}
