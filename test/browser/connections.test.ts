import type { Browser } from 'playwright-core'
import { Client as ModernClient, StreamableHTTPClientTransport } from '@modelcontextprotocol/client'
import type { FastifyInstance } from 'fastify'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { buildApp } from '../../plugins/app.js'
import { loadConfig } from '../../src/services/config.js'
import { API_KEYS, KEYS } from '../approvals/helpers.js'
import { SLOW } from '../slow.js'
import { freePort, upstreamsFile } from '../upstreams/helpers.js'
import { LINK_CLIENT, startAuthorizationServer, type AuthorizationServer } from '../upstreams/identity/authorization-server.js'
import { startBearerApi, startBearerMcpServer, type BearerUpstream } from '../upstreams/identity/bearer-upstreams.js'
import { HAVE_CHROMIUM, launchChromium } from './chromium.js'

/*
 * A person links their own account at an upstream on the connections page, in Chromium: the
 * upstream's authorization server (oidc-provider) signs them in, the gateway keeps the link,
 * their calls reach the upstream (an HTTP API and a remote MCP server on the SDK, both checking
 * bearer tokens) as that account; a refresh token revoked at the issuer breaks the link; they
 * unlink. Access tokens live 4 s here, so every few seconds a call refreshes one.
 */

let issuer: AuthorizationServer
let api: BearerUpstream
let mcp: BearerUpstream
/** A remote MCP server whose issuer the gateway finds from its metadata, registering a client there itself. */
let found: BearerUpstream
let app: FastifyInstance
let browser: Browser
let base = ''

beforeAll(async () => {
  if (!HAVE_CHROMIUM) return
  const port = await freePort()
  base = `http://127.0.0.1:${port}`
  issuer = await startAuthorizationServer({ accessTokenTtlSec: 4, linkRedirectUri: `${base}/connections/callback`, registration: true })
  const trust = { jwksUrl: `${issuer.url}/jwks`, issuer: issuer.url }
  api = await startBearerApi(trust)
  mcp = await startBearerMcpServer(trust)
  found = await startBearerMcpServer(trust, { advertise: true })
  process.env.TOOLGATE_TEST_LINK_SECRET = LINK_CLIENT.secret
  const link = (resource: string): Record<string, unknown> => ({ type: 'link', issuer: issuer.url, clientId: LINK_CLIENT.id, clientSecret: '${TOOLGATE_TEST_LINK_SECRET}', scope: 'openid upstream:use', resource })
  const config = loadConfig({}, {
    apiKeys: API_KEYS, port, approvalsPublicUrl: base,
    upstreamsFile: upstreamsFile({ openapi: { api: { document: `${api.url}/openapi.json`, auth: link(api.url) } }, mcpServers: { bearer: { url: mcp.url, auth: link(mcp.url) }, found: { url: found.url, auth: { type: 'link', scope: 'openid upstream:use' } } } }),
  })
  app = await buildApp({ config, tools: [] })
  await app.listen({ host: '127.0.0.1', port })
  browser = await launchChromium()
}, SLOW.BROWSER_MS)
afterAll(async () => {
  await browser?.close()
  await app?.close()
  await Promise.all([issuer?.close(), api?.close(), mcp?.close(), found?.close()])
})

async function call (tool: string, key: string): Promise<{ status: number, body: Record<string, unknown> }> {
  const response = await fetch(`${base}/tools/${tool}`, { method: 'POST', headers: { 'content-type': 'application/json', 'x-api-key': key }, body: '{}' })
  return { status: response.status, body: await response.json() as Record<string, unknown> }
}

/** `toolgate_upstream_links` of an upstream, by state. */
async function links (upstream: string): Promise<Record<string, number>> {
  const text = await (await fetch(`${base}/metrics`)).text()
  const of = (state: string): number => Number(new RegExp(`toolgate_upstream_links\\{upstream="${upstream}",state="${state}"\\} (\\d+)`).exec(text)?.[1])
  return { linked: of('linked'), broken: of('broken') }
}

describe.skipIf(!HAVE_CHROMIUM)('the connections page', { timeout: SLOW.BROWSER_MS }, () => {
  it('links a person\'s own account, their calls reach the upstream as it, a revoked refresh token breaks the link, they unlink', async () => {
    // Not linked yet: the call says where to link, and nothing is sent.
    const before = await call('api_whoami', KEYS.alice)
    expect(before.status).toBe(403)
    expect(before.body).toMatchObject({ code: 'TOOLGATE_LINK_REQUIRED', link: 'unlinked', linkUrl: `${base}/connections/ui`, upstream: 'api' })
    expect(api.subjects).toEqual([])

    const context = await browser.newContext()
    const page = await context.newPage()
    const errors: string[] = []
    page.on('pageerror', error => { errors.push(error.message) })
    await page.goto(`${base}/connections/ui`)
    await page.locator('#key').fill(KEYS.alice)
    await page.locator('#key-form button[type="submit"]').click()
    await page.locator('#board').waitFor()
    expect(await page.locator('#viewer').textContent()).toBe('alice')
    const apiRow = page.locator('li.connection[data-upstream="api"]')
    expect(await apiRow.locator('.state').textContent()).toBe('Not linked')

    // Link: the issuer's own login and consent pages, then back here.
    const linkAt = async (upstream: string, login: string): Promise<void> => {
      const done = page.locator(`li.connection.linked[data-upstream="${upstream}"]`)
      const loginField = page.locator('input[name="login"]')
      const continueButton = page.locator('button[type="submit"]', { hasText: 'Continue' })
      await page.locator(`li.connection[data-upstream="${upstream}"] button.link`).click()
      // The issuer asks who it is only once per browser, and for consent once per resource; then it sends the browser straight back.
      await loginField.or(continueButton).or(done).first().waitFor()
      if (await loginField.isVisible()) {
        await loginField.fill(login)
        await page.locator('input[name="password"]').fill('any')
        await page.locator('button[type="submit"]').click()
        await continueButton.waitFor()
      }
      if (await continueButton.isVisible()) await continueButton.click()
      await done.waitFor()
      expect(new URL(page.url()).pathname).toBe('/connections/ui')
    }
    await linkAt('api', 'alice-at-the-api')
    expect(await page.locator('#notice').textContent()).toBe('api is linked.')
    expect(await links('api')).toEqual({ linked: 1, broken: 0 })
    const linked = await call('api_whoami', KEYS.alice)
    expect(linked.status, JSON.stringify(linked.body)).toBe(200)
    expect(linked.body).toEqual({ subject: 'alice-at-the-api' })
    // Another person has linked nothing: never alice's account.
    expect((await call('api_whoami', KEYS.carol)).body).toMatchObject({ code: 'TOOLGATE_LINK_REQUIRED' })

    // The same account at the issuer (this browser is signed in there): the MCP server sees it too.
    await linkAt('bearer', 'alice-at-the-api')
    const viaMcp = await call('bearer_whoami', KEYS.alice)
    expect(viaMcp.status, JSON.stringify(viaMcp.body)).toBe(200)
    expect(viaMcp.body).toMatchObject({ structuredContent: { subject: 'alice-at-the-api' } })

    // Past the access token's life the link refreshes it: still alice's account.
    await new Promise(resolve => setTimeout(resolve, 4_500))
    expect((await call('api_whoami', KEYS.alice)).body).toEqual({ subject: 'alice-at-the-api' })
    expect(issuer.grants.filter(grant => grant.type === 'refresh_token').length).toBeGreaterThanOrEqual(1)

    // Revoked at the issuer: the next refresh is refused, the link breaks, the call asks to link again.
    await issuer.revokeRefreshTokens()
    await new Promise(resolve => setTimeout(resolve, 4_500))
    const broken = await call('api_whoami', KEYS.alice)
    expect(broken.status).toBe(403)
    expect(broken.body).toMatchObject({ code: 'TOOLGATE_LINK_REQUIRED', link: 'broken' })
    await page.reload()
    await page.locator('li.connection.broken[data-upstream="api"]').waitFor()
    expect(await links('api')).toEqual({ linked: 0, broken: 1 })

    // Link again, then unlink: the page says so, and the call asks to link.
    await linkAt('api', 'alice-at-the-api')
    expect((await call('api_whoami', KEYS.alice)).status).toBe(200)
    await page.locator('li.connection[data-upstream="api"] button.unlink').click()
    await page.locator('li.connection.unlinked[data-upstream="api"]').waitFor()
    expect((await call('api_whoami', KEYS.alice)).body).toMatchObject({ code: 'TOOLGATE_LINK_REQUIRED', link: 'unlinked' })
    expect(await links('api')).toEqual({ linked: 0, broken: 0 })
    expect(await (await fetch(`${base}/metrics`)).text()).toMatch(/toolgate_upstream_link_events_total\{upstream="api",event="broken"\} 1/)

    // The page never holds a token: nothing in its cookies, storage or text.
    const cookies = (await context.cookies(base)).filter(cookie => cookie.name.startsWith('toolgate'))
    expect(cookies.every(cookie => cookie.httpOnly)).toBe(true)
    const text = await page.content()
    for (const sent of [...api.tokens, ...mcp.tokens]) expect(text).not.toContain(sent.replace('Bearer ', ''))
    expect(errors).toEqual([])
    await context.close()
  })

  it('finds a remote MCP server\'s issuer from its metadata, registers a client there, and links through it', async () => {
    const context = await browser.newContext()
    const page = await context.newPage()
    await page.goto(`${base}/connections/ui`)
    await page.locator('#key').fill(KEYS.carol)
    await page.locator('#key-form button[type="submit"]').click()
    await page.locator('li.connection[data-upstream="found"] button.link').click()
    await page.waitForURL(url => url.origin === issuer.url)
    // The authorization request of a client the gateway registered, for the server's own resource.
    const asked = new URL(page.url())
    expect(asked.pathname === '/auth' || asked.pathname.startsWith('/interaction/')).toBe(true)
    await page.locator('input[name="login"]').fill('carol-found')
    await page.locator('input[name="password"]').fill('any')
    await page.locator('button[type="submit"]').click()
    await page.locator('button[type="submit"]', { hasText: 'Continue' }).click()
    await page.locator('li.connection.linked[data-upstream="found"]').waitFor()
    const answer = await call('found_whoami', KEYS.carol)
    expect(answer.status, JSON.stringify(answer.body)).toBe(200)
    expect(answer.body).toMatchObject({ structuredContent: { subject: 'carol-found' } })
    await context.close()
  })

  it('asks a 2026-07-28 MCP client that opens URLs to link, with a URL elicitation, and its retry runs as the account', async () => {
    const context = await browser.newContext()
    const opened: string[] = []
    const client = new ModernClient({ name: 'a 2026 host', version: '1.0.0' }, { versionNegotiation: { mode: 'auto' }, capabilities: { elicitation: { url: {} } } })
    // The host opens the URL for its person, who links there; then it accepts, and the SDK retries the call.
    client.setRequestHandler('elicitation/create', async request => {
      const params = request.params as { mode?: string, url?: string }
      opened.push(`${params.mode}:${params.url}`)
      const page = await context.newPage()
      await page.goto(params.url!)
      await page.locator('#key').fill(KEYS.bob)
      await page.locator('#key-form button[type="submit"]').click()
      await page.locator('li.connection[data-upstream="api"] button.link').click()
      await page.locator('input[name="login"]').fill('bob-at-the-api')
      await page.locator('input[name="password"]').fill('any')
      await page.locator('button[type="submit"]').click()
      await page.locator('button[type="submit"]', { hasText: 'Continue' }).click()
      await page.locator('li.connection.linked[data-upstream="api"]').waitFor()
      await page.close()
      return { action: 'accept' }
    })
    await client.connect(new StreamableHTTPClientTransport(new URL(`${base}/mcp`), { requestInit: { headers: { 'x-api-key': KEYS.bob } } }))
    const result = await client.callTool({ name: 'api_whoami', arguments: {} })
    expect(result.structuredContent).toEqual({ subject: 'bob-at-the-api' })
    expect(opened).toEqual([`url:${base}/connections/ui`])
    await client.close()
    await context.close()
  })

  it('finishes a link only in the browser that began it', async () => {
    // Alice begins a link; someone else's browser (no flow cookie) opening the issuer's answer gets nothing linked.
    const begun = await fetch(`${base}/connections/api/link`, { method: 'POST', headers: { 'x-api-key': KEYS.alice } })
    const { url } = await begun.json() as { url: string }
    const state = new URL(url).searchParams.get('state')!
    const forged = await fetch(`${base}/connections/callback?code=whatever&state=${state}`, { redirect: 'manual' })
    expect(forged.status).toBe(303)
    expect(forged.headers.get('location')).toMatch(/failed=.*this%20browser%20did%20not%20begin%20this%20link/)
    // A caller without the call scope may not link at all.
    expect((await fetch(`${base}/connections/api/link`, { method: 'POST', headers: { 'x-api-key': KEYS.dave } })).status).toBe(403)
    // Another site may not begin one with the page's credentials.
    expect((await fetch(`${base}/connections/api/link`, { method: 'POST', headers: { 'x-api-key': KEYS.alice, origin: 'https://evil.example' } })).status).toBe(403)
  })
})
