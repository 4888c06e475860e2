import { createServer, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import { exportJWK, exportSPKI, generateKeyPair, jwtVerify, SignJWT, type CryptoKey } from 'jose'
import Provider, { errors, type KoaContextWithOIDC } from 'oidc-provider'

/*
 * A real authorization server for the upstreams (`oidc-provider`): the gateway's OAuth client
 * gets its own tokens (client credentials) and exchanges callers' tokens (RFC 8693, a grant
 * registered through `registerGrantType`) for JWT access tokens whose audience is the upstream.
 * Callers' own tokens come from another issuer (`mintCaller`), which the gateway verifies with
 * `JWT_KEY` and the exchange trusts.
 */

export const GATEWAY_CLIENT = { id: 'toolgate-gateway', secret: 'gateway-client-secret-0123456789abcdef' }
/** The gateway's client for people's links (authorization code with PKCE). */
export const LINK_CLIENT = { id: 'toolgate-links', secret: 'links-client-secret-0123456789abcdef' }
export const CALLER_ISSUER = 'https://callers.test'
export const CALLER_AUDIENCE = 'toolgate'
const TOKEN_EXCHANGE = 'urn:ietf:params:oauth:grant-type:token-exchange'
const ACCESS_TOKEN_TYPE = 'urn:ietf:params:oauth:token-type:access_token'

export interface AuthorizationServer {
  readonly url: string
  /** Grants issued, by type (`client_credentials`, the token-exchange URN), with the subject they were for. */
  readonly grants: Array<{ readonly type: string, readonly subject?: string, readonly audience?: string }>
  /** The callers' issuer's public key, for the gateway's `JWT_KEY`. */
  readonly callerKeyPem: string
  /** A caller's access token, as the callers' issuer would sign it. */
  mintCaller: (subject: string, scopes?: string) => Promise<string>
  /** Answer every token request 503 (down) or after `ms` (slow) until set back to undefined. */
  setTrouble: (trouble: { readonly kind: 'down' } | { readonly kind: 'slow', readonly ms: number } | undefined) => void
  /** Revoke every refresh token issued so far, as a person revoking the gateway's access at the issuer would. */
  revokeRefreshTokens: () => Promise<void>
  close: () => Promise<void>
}

export interface AuthorizationServerOptions {
  readonly accessTokenTtlSec?: number
  /** Register the gateway's link client, redirecting here. */
  readonly linkRedirectUri?: string | readonly string[]
  /** Open dynamic client registration (RFC 7591), as an MCP host expects. */
  readonly registration?: boolean
  /** The scopes a resource's tokens may carry (default `upstream:use`). */
  readonly resourceScope?: string
}

export async function startAuthorizationServer (options: AuthorizationServerOptions = {}): Promise<AuthorizationServer> {
  const ttl = options.accessTokenTtlSec ?? 300
  const caller = await generateKeyPair('RS256', { extractable: true })
  const signing = await generateKeyPair('RS256', { extractable: true })
  const grants: AuthorizationServer['grants'] = []
  let trouble: Parameters<AuthorizationServer['setTrouble']>[0]
  let provider: Provider | undefined
  const server: Server = createServer((request, response) => {
    const current = trouble
    if (current !== undefined && request.url?.startsWith('/token') === true) {
      if (current.kind === 'down') {
        response.writeHead(503, { 'content-type': 'application/json' }).end(JSON.stringify({ error: 'temporarily_unavailable' }))
        return
      }
      setTimeout(() => { provider!.callback()(request, response) }, current.ms)
      return
    }
    provider!.callback()(request, response)
  })
  await new Promise<void>(resolve => server.listen(0, '127.0.0.1', resolve))
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`
  const jwtFor = (audience: string): ConstructorParameters<Provider['ResourceServer']>[1] => ({ audience, scope: options.resourceScope ?? 'upstream:use', accessTokenFormat: 'jwt', accessTokenTTL: ttl, jwt: { sign: { alg: 'RS256' } } })
  provider = new Provider(url, {
    clients: [{
      client_id: GATEWAY_CLIENT.id,
      client_secret: GATEWAY_CLIENT.secret,
      grant_types: ['client_credentials', TOKEN_EXCHANGE],
      redirect_uris: [],
      response_types: [],
      token_endpoint_auth_method: 'client_secret_basic',
    }, ...options.linkRedirectUri === undefined ? [] : [{
      client_id: LINK_CLIENT.id,
      client_secret: LINK_CLIENT.secret,
      // Its own token too: the gateway lists a linked MCP server's tools as itself.
      grant_types: ['authorization_code', 'refresh_token', 'client_credentials'],
      redirect_uris: [options.linkRedirectUri].flat(),
      response_types: ['code' as const],
      token_endpoint_auth_method: 'client_secret_basic' as const,
    }]],
    findAccount: async (_ctx, id) => ({ accountId: id, claims: async () => ({ sub: id }) }),
    scopes: ['openid', 'offline_access', ...(options.resourceScope ?? 'upstream:use').split(' ')],
    pkce: { required: () => true },
    issueRefreshToken: async (_ctx, client) => client.grantTypeAllowed('refresh_token'),
    cookies: { keys: ['authorization-server-test-cookie-key-0123456789'] },
    jwks: { keys: [{ ...await exportJWK(signing.privateKey), kid: 'as-1', alg: 'RS256', use: 'sig' }] },
    features: {
      devInteractions: { enabled: options.linkRedirectUri !== undefined || options.registration === true },
      registration: { enabled: options.registration === true },
      revocation: { enabled: true },
      clientCredentials: { enabled: true },
      resourceIndicators: {
        enabled: true,
        defaultResource: () => undefined as unknown as string,
        useGrantedResource: () => true,
        getResourceServerInfo: (_ctx, resource) => jwtFor(resource),
      },
    },
  })
  const refreshGrants = new Set<string>()
  provider.on('refresh_token.saved', (token: { grantId?: string }) => { if (token.grantId !== undefined) refreshGrants.add(token.grantId) })
  provider.on('grant.success', ctx => {
    const type = String(ctx.oidc.params?.grant_type)
    if (type === 'client_credentials' || type === 'authorization_code' || type === 'refresh_token') grants.push({ type })
  })
  provider.registerGrantType(TOKEN_EXCHANGE, async (ctx: KoaContextWithOIDC) => {
    const params = ctx.oidc.params as Record<string, string | undefined>
    if (params.subject_token_type !== ACCESS_TOKEN_TYPE) throw new errors.InvalidRequest('subject_token_type must be an access token')
    let subject: string
    try {
      const { payload } = await jwtVerify(params.subject_token ?? '', caller.publicKey, { issuer: CALLER_ISSUER, audience: CALLER_AUDIENCE })
      subject = payload.sub!
    } catch {
      throw new errors.InvalidGrant('the subject token is not valid')
    }
    const audience = params.audience ?? params.resource
    if (audience === undefined) throw new errors.InvalidTarget('an audience or resource is needed')
    const { AccessToken, Grant, ResourceServer } = ctx.oidc.provider
    const grant = new Grant({ accountId: subject, clientId: GATEWAY_CLIENT.id })
    grant.addResourceScope(audience, 'upstream:use')
    const grantId = await grant.save()
    const token = new AccessToken({ accountId: subject, client: ctx.oidc.client!, grantId, gty: 'token_exchange', scope: 'upstream:use', resourceServer: new ResourceServer(audience, jwtFor(audience)) })
    const value = await token.save()
    grants.push({ type: TOKEN_EXCHANGE, subject, audience })
    ctx.body = { access_token: value, issued_token_type: ACCESS_TOKEN_TYPE, token_type: 'Bearer', expires_in: token.expiration }
  }, ['subject_token', 'subject_token_type', 'requested_token_type', 'audience', 'resource', 'scope'])
  return {
    url,
    grants,
    callerKeyPem: await exportSPKI(caller.publicKey as CryptoKey),
    mintCaller: async (subject, scopes = 'tools:read tools:call') => await new SignJWT({ scope: scopes })
      .setProtectedHeader({ alg: 'RS256' }).setIssuer(CALLER_ISSUER).setAudience(CALLER_AUDIENCE).setSubject(subject)
      .setIssuedAt().setExpirationTime('10m').sign(caller.privateKey),
    setTrouble: next => { trouble = next },
    revokeRefreshTokens: async () => {
      for (const grantId of refreshGrants) await provider!.RefreshToken.revokeByGrantId(grantId)
    },
    close: async () => {
      server.closeAllConnections()
      await new Promise(resolve => server.close(resolve))
    },
  }
}
