import { createServer, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import type { Browser } from 'playwright-core'
import type { FastifyInstance } from 'fastify'
import { z } from 'zod'
import { Client } from '@modelcontextprotocol/sdk/client/index.js'
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js'
import { UnauthorizedError, type OAuthClientProvider } from '@modelcontextprotocol/sdk/client/auth.js'
import type { OAuthClientInformationMixed, OAuthClientMetadata, OAuthTokens } from '@modelcontextprotocol/sdk/shared/auth.js'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { buildApp } from '../../plugins/app.js'
import { defineTool } from '../../src/index.js'
import type { GatewayApp } from '../../src/core/app-context.js'
import { loadConfig } from '../../src/services/config.js'
import { SLOW } from '../slow.js'
import { freePort } from '../upstreams/helpers.js'
import { startAuthorizationServer, type AuthorizationServer } from '../upstreams/identity/authorization-server.js'
import { HAVE_CHROMIUM, launchChromium } from './chromium.js'

/*
 * Inbound, the same standards: an MCP host signs in to the gateway with OAuth as the MCP spec
 * has it, with the official SDK client's own OAuth support. It is refused 401 with the gateway's
 * protected resource metadata, reads it, finds the issuer there (oidc-provider), registers itself
 * (RFC 7591), sends the person through authorization code with PKCE (the login driven in
 * Chromium), and then calls /mcp as that person.
 */

let issuer: AuthorizationServer
let app: FastifyInstance
let browser: Browser
let callbackServer: Server
let base = ''
let callback = ''
const codes: string[] = []

const whoami = defineTool({
  id: 'whoami', kind: 'read', description: 'Who the gateway sees calling.', isReadOnly: true, isConcurrencySafe: true,
  inputSchema: z.object({}).strict(), outputSchema: z.object({ principal: z.string(), scopes: z.array(z.string()) }),
  authorize () {},
  execute: async (_input, ctx) => {
    const { principal } = (ctx.app as GatewayApp)
    return { principal: principal.id, scopes: [...principal.scopes] }
  },
})

beforeAll(async () => {
  if (!HAVE_CHROMIUM) return
  callbackServer = createServer((request, response) => {
    const code = new URL(request.url!, 'http://host').searchParams.get('code')
    if (code !== null) codes.push(code)
    response.end('signed in; back to the host')
  })
  await new Promise<void>(resolve => callbackServer.listen(0, '127.0.0.1', resolve))
  callback = `http://127.0.0.1:${(callbackServer.address() as AddressInfo).port}/callback`
  const port = await freePort()
  base = `http://127.0.0.1:${port}`
  issuer = await startAuthorizationServer({ registration: true, resourceScope: 'tools:read tools:call tools:approve' })
  const config = loadConfig({ JWT_ISSUER: issuer.url, JWT_AUDIENCE: `${base}/mcp`, JWT_JWKS_URL: `${issuer.url}/jwks`, JWT_ALGORITHMS: 'RS256' }, { port })
  app = await buildApp({ config, tools: [whoami] })
  await app.listen({ host: '127.0.0.1', port })
  browser = await launchChromium()
}, SLOW.BROWSER_MS)
afterAll(async () => {
  await browser?.close()
  await app?.close()
  await issuer?.close()
  await new Promise(resolve => callbackServer?.close(resolve))
})

/** An MCP host's side of OAuth, in memory: what the SDK asks its host to keep. */
class Host implements OAuthClientProvider {
  authorizationUrl: URL | undefined
  #client: OAuthClientInformationMixed | undefined
  #tokens: OAuthTokens | undefined
  #verifier = ''
  get redirectUrl (): string { return callback }
  get clientMetadata (): OAuthClientMetadata {
    return { client_name: 'an MCP host', redirect_uris: [callback], grant_types: ['authorization_code', 'refresh_token'], response_types: ['code'], token_endpoint_auth_method: 'none' }
  }

  clientInformation (): OAuthClientInformationMixed | undefined { return this.#client }
  saveClientInformation (client: OAuthClientInformationMixed): void { this.#client = client }
  tokens (): OAuthTokens | undefined { return this.#tokens }
  saveTokens (tokens: OAuthTokens): void { this.#tokens = tokens }
  redirectToAuthorization (url: URL): void { this.authorizationUrl = url }
  saveCodeVerifier (verifier: string): void { this.#verifier = verifier }
  codeVerifier (): string { return this.#verifier }
}

describe.skipIf(!HAVE_CHROMIUM)('an MCP host signing in to the gateway with OAuth', { timeout: SLOW.BROWSER_MS }, () => {
  it('discovers the issuer from the gateway, registers, signs the person in with PKCE, and calls as them', async () => {
    const host = new Host()
    const url = new URL(`${base}/mcp`)
    const first = new Client({ name: 'an MCP host', version: '1.0.0' })
    await expect(first.connect(new StreamableHTTPClientTransport(url, { authProvider: host }))).rejects.toThrow(UnauthorizedError)
    // It registered itself at the issuer the gateway named, and asked for a code with PKCE for the gateway's /mcp.
    expect(host.clientInformation()?.client_id).toBeDefined()
    const authorization = host.authorizationUrl!
    expect(authorization.origin).toBe(issuer.url)
    expect(authorization.searchParams.get('code_challenge_method')).toBe('S256')
    expect(authorization.searchParams.get('resource')).toBe(`${base}/mcp`)

    const page = await browser.newPage()
    await page.goto(authorization.href)
    await page.locator('input[name="login"]').fill('maria')
    await page.locator('input[name="password"]').fill('any')
    await page.locator('button[type="submit"]').click()
    await page.locator('button[type="submit"]', { hasText: 'Continue' }).click()
    await page.waitForURL(target => target.href.startsWith(callback))
    await page.close()
    expect(codes).toHaveLength(1)

    const transport = new StreamableHTTPClientTransport(url, { authProvider: host })
    await transport.finishAuth(codes[0]!)
    const client = new Client({ name: 'an MCP host', version: '1.0.0' })
    await client.connect(transport)
    const { tools } = await client.listTools()
    expect(tools.map(tool => tool.name)).toContain('whoami')
    const result = await client.callTool({ name: 'whoami', arguments: {} })
    expect(result.structuredContent).toEqual({ principal: 'jwt:maria', scopes: ['tools:read', 'tools:call', 'tools:approve'] })
    await client.close()
  })
})
