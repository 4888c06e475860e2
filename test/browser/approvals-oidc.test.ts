import type { FastifyInstance } from 'fastify'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { SLOW } from '../slow.js'
import { buildApp } from '../../plugins/app.js'
import { loadConfig } from '../../src/services/config.js'
import { API_KEYS, approvalTools, KEYS } from '../approvals/helpers.js'
import { browserGateway, HAVE_CHROMIUM } from './chromium.js'
import { startIssuer, type Issuer } from './oidc-issuer.js'

/*
 * The approvals page signing a person in with the gateway's OpenID Connect issuer: a real
 * oidc-provider started here, its login and consent pages filled in by the browser, the
 * authorization code exchanged with PKCE by the gateway, the session an HttpOnly cookie.
 */

const CLIENT = { id: 'toolgate-approvals', secret: 'approvals-client-secret-0123456789' }
const executions: string[] = []
let issuer: Issuer | undefined
const gateway = browserGateway(async (): Promise<FastifyInstance> => {
  issuer = await startIssuer()
  const config = loadConfig({
    JWT_ISSUER: issuer.url, JWT_AUDIENCE: 'toolgate', JWT_JWKS_URL: `${issuer.url}/jwks`, JWT_ALGORITHMS: 'RS256',
    APPROVALS_OIDC_CLIENT_ID: CLIENT.id, APPROVALS_OIDC_CLIENT_SECRET: CLIENT.secret,
  }, { apiKeys: API_KEYS })
  return await buildApp({ config, tools: approvalTools(executions) })
})
beforeAll(async () => {
  if (HAVE_CHROMIUM) await issuer!.start({ ...CLIENT, redirectUri: `${gateway.base}/approvals/ui/callback` })
})
afterAll(async () => { await issuer?.close() })

describe.skipIf(!HAVE_CHROMIUM)('the approvals page, signed in through OpenID Connect', () => {
  it('signs in at the issuer, shows a request made meanwhile without a reload, approves it, refreshes the token, signs out', async () => {
    const context = await gateway.browser.newContext()
    const page = await context.newPage()
    const errors: string[] = []
    page.on('pageerror', error => { errors.push(error.message) })
    await page.goto(`${gateway.base}/approvals/ui`)
    await page.locator('#oidc').click()
    // The issuer's own pages: login, then consent.
    await page.waitForURL(url => url.origin === issuer!.url)
    await page.locator('input[name="login"]').fill('reviewer')
    await page.locator('input[name="password"]').fill('any')
    await page.locator('button[type="submit"]').click()
    await page.locator('button[type="submit"]', { hasText: 'Continue' }).click()
    await page.waitForURL(`${gateway.base}/approvals/ui`)
    await page.locator('#board').waitFor()
    expect(await page.locator('#viewer').textContent()).toBe('jwt:reviewer')
    expect(issuer!.grants).toEqual(['authorization_code'])

    // The session is a cookie the page's script cannot read (read by the approvals and connections routes only).
    // (The issuer's own cookies are there too: cookies do not tell ports apart.)
    const ours = async () => (await context.cookies(`${gateway.base}/approvals/ui`)).filter(c => c.name.startsWith('toolgate'))
    const cookies = await ours()
    expect(cookies.map(c => [c.name, c.httpOnly, c.sameSite, c.path])).toEqual([['toolgate-approvals', true, 'Strict', '/']])
    expect(await page.evaluate('document.cookie')).toBe('')
    // The cookie authenticates the approvals routes only: a tool call from the page is refused.
    expect(await page.evaluate(`fetch('/tools/echo', { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{"text":"x"}' }).then(r => r.status)`)).toBe(401)

    const waiting = fetch(`${gateway.base}/tools/pay`, { method: 'POST', headers: { 'content-type': 'application/json', 'x-api-key': KEYS.alice, prefer: 'wait=30' }, body: JSON.stringify({ to: 'mallory', amount: 700 }) })
    const card = page.locator('article.card', { hasText: 'mallory' })
    await card.waitFor({ timeout: 15_000 })
    // The same session cookie on a request from another origin (or another site) is no credential: it neither reads nor decides.
    const id = await card.getAttribute('data-id')
    for (const headers of [{ origin: 'https://evil.example' }, { 'sec-fetch-site': 'same-site' }] as Array<Record<string, string>>) {
      const foreign = await context.request.post(`${gateway.base}/approvals/${id}/approve`, { headers, data: {} })
      expect([foreign.status(), (await foreign.json()).code]).toEqual([401, 'TOOLGATE_UNAUTHENTICATED'])
      expect((await context.request.get(`${gateway.base}/approvals/ui/feed`, { headers })).status()).toBe(401)
    }
    expect((await context.request.get(`${gateway.base}/approvals/ui/feed`)).status()).toBe(200) // the cookie itself is good
    await card.locator('button[data-action="approve"]').click()
    await card.locator('.status.approved').waitFor({ timeout: 10_000 })
    expect((await waiting).status).toBe(200)
    expect(executions).toEqual(['pay:mallory:700'])
    const approval = await (await fetch(`${gateway.base}/approvals/${await card.getAttribute('data-id')}`, { headers: { 'x-api-key': KEYS.alice } })).json()
    expect(approval).toMatchObject({ status: 'consumed', decidedBy: 'jwt:reviewer' })

    // The access token lives 33 s, refreshed 30 s before it expires: the page's polls keep it fresh.
    await expect.poll(() => issuer!.grants.includes('refresh_token'), { timeout: 20_000, interval: 250 }).toBe(true)
    expect(await page.evaluate("fetch('ui/feed').then(r => r.status)")).toBe(200)

    await page.locator('#signout').click()
    await page.locator('#signin').waitFor()
    expect(await ours()).toEqual([])
    expect(await page.evaluate("fetch('ui/feed').then(r => r.status)")).toBe(401)
    await expect.poll(() => issuer!.revocations(), { timeout: 5_000 }).toBeGreaterThan(0)
    expect(errors).toEqual([])
    await context.close()
  }, SLOW.BROWSER_MS)

  it('a callback without a sign-in under way (forged or replayed) signs nobody in', async () => {
    const context = await gateway.browser.newContext()
    const page = await context.newPage()
    await page.goto(`${gateway.base}/approvals/ui/callback?code=forged&state=forged`)
    await page.locator('#signin').waitFor()
    expect(await page.locator('#signin-error').textContent()).toContain('failed')
    expect((await context.cookies(`${gateway.base}/approvals/ui`)).filter(c => c.name.startsWith('toolgate'))).toEqual([])
    await context.close()
  }, SLOW.BROWSER_MS)
})
