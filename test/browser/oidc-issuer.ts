import { createServer, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import { exportJWK, generateKeyPair } from 'jose'
import Provider from 'oidc-provider'

export interface Issuer {
  readonly url: string
  /** Register the one client (the gateway's page) once the gateway's origin is known. */
  start: (client: { id: string, secret: string, redirectUri: string }) => Promise<void>
  /** Grants the provider made, by grant type (`authorization_code`, `refresh_token`). */
  readonly grants: string[]
  /** Grants revoked (a refresh token revoked at its revocation endpoint revokes its grant). */
  readonly revocations: () => number
  close: () => Promise<void>
}

/** Access tokens live this long: past REFRESH_AHEAD_MS (30 s) by little, so the page refreshes one within seconds. */
const ACCESS_TOKEN_TTL_SEC = 33

/**
 * A real OpenID provider (`oidc-provider`) on a loopback address (`host`), its development login and consent
 * pages on: any login and password sign in as that login. Access tokens are JWTs for the
 * audience `toolgate`, carrying `tools:read tools:approve` when asked for.
 */
export async function startIssuer (host = '127.0.0.1'): Promise<Issuer> {
  let provider: Provider | undefined
  const grants: string[] = []
  let revocations = 0
  const server: Server = createServer((request, response) => {
    if (provider === undefined) response.writeHead(503).end()
    else provider.callback()(request, response)
  })
  await new Promise<void>(resolve => server.listen(0, host, resolve))
  const url = `http://${host}:${(server.address() as AddressInfo).port}`
  return {
    url,
    grants,
    revocations: () => revocations,
    start: async client => {
      const { privateKey } = await generateKeyPair('RS256', { extractable: true })
      const jwk = { ...await exportJWK(privateKey), kid: 'k1', alg: 'RS256', use: 'sig' }
      provider = new Provider(url, {
        clients: [{
          client_id: client.id,
          client_secret: client.secret,
          redirect_uris: [client.redirectUri],
          grant_types: ['authorization_code', 'refresh_token'],
          response_types: ['code'],
          token_endpoint_auth_method: 'client_secret_basic',
        }],
        jwks: { keys: [jwk] },
        cookies: { keys: ['oidc-provider-test-cookie-key-0123456789'] },
        findAccount: async (_ctx, id) => ({ accountId: id, claims: async () => ({ sub: id }) }),
        scopes: ['openid', 'offline_access'],
        pkce: { required: () => true },
        // As many issuers do, refresh tokens for a client allowed them, without demanding prompt=consent for offline_access.
        issueRefreshToken: async (_ctx, client) => client.grantTypeAllowed('refresh_token'),
        ttl: { AccessToken: ACCESS_TOKEN_TTL_SEC, IdToken: 3600, Grant: 3600, Session: 3600, Interaction: 600, AuthorizationCode: 60, RefreshToken: 3600 },
        features: {
          devInteractions: { enabled: true },
          revocation: { enabled: true },
          resourceIndicators: {
            enabled: true,
            defaultResource: () => 'urn:toolgate',
            useGrantedResource: () => true,
            getResourceServerInfo: () => ({ scope: 'tools:read tools:approve', audience: 'toolgate', accessTokenFormat: 'jwt', accessTokenTTL: ACCESS_TOKEN_TTL_SEC, jwt: { sign: { alg: 'RS256' } } }),
          },
        },
      })
      provider.on('grant.success', ctx => { grants.push(String(ctx.oidc.params?.grant_type)) })
      provider.on('grant.revoked', () => { revocations++ })
    },
    close: async () => {
      server.closeAllConnections()
      await new Promise(resolve => server.close(resolve))
    },
  }
}
