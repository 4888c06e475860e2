import { mkdtempSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import type { Page } from 'playwright-core'
import { describe, expect, it } from 'vitest'
import { SLOW } from '../slow.js'
import { buildApp } from '../../plugins/app.js'
import { loadConfig } from '../../src/services/config.js'
import { API_KEYS, approvalTools, KEYS } from '../approvals/helpers.js'
import { browserGateway, HAVE_CHROMIUM } from './chromium.js'

/*
 * The approvals page in a real browser (Debian's chromium, driven by playwright-core), signed
 * in with an API key typed into the page: it is kept for the tab and sent on each request the
 * page makes, and nothing else carries it.
 */

const executions: string[] = []
const SHOTS = mkdtempSync(join(tmpdir(), 'toolgate-approvals-'))
const gateway = browserGateway(async () => {
  const config = loadConfig({}, { apiKeys: API_KEYS, approvalRules: [{ principal: 'carol', tools: ['pay'], approvers: ['bob', 'dave'] }] })
  return await buildApp({ config, tools: approvalTools(executions) })
})

const pay = (key: string, body: object, headers: Record<string, string> = {}) =>
  fetch(`${gateway.base}/tools/pay`, { method: 'POST', headers: { 'content-type': 'application/json', 'x-api-key': key, ...headers }, body: JSON.stringify(body) })

async function signedInPage (key: string): Promise<{ page: Page, navigations: () => number, errors: string[] }> {
  const page = await gateway.browser.newPage()
  const errors: string[] = []
  page.on('pageerror', error => { errors.push(error.message) })
  page.on('console', message => { if (message.type() === 'error' && !message.text().includes('401')) errors.push(message.text()) })
  let navigations = 0
  page.on('framenavigated', frame => { if (frame === page.mainFrame()) navigations++ })
  const response = await page.goto(`${gateway.base}/approvals/ui`)
  expect(response?.status()).toBe(200) // the page itself needs no credential
  expect(response?.headers()['content-security-policy']).toMatch(/default-src 'none'; script-src 'nonce-/)
  await page.locator('#key').waitFor()
  await page.locator('#key').fill(key)
  await page.keyboard.press('Enter')
  await page.locator('#board').waitFor()
  return { page, navigations: () => navigations, errors }
}

describe.skipIf(!HAVE_CHROMIUM)('the approvals page, signed in with an API key', () => {
  it('a request made while the page is open appears without a reload; Approve lets the waiting call run once', async () => {
    const { page, navigations, errors } = await signedInPage(KEYS.dave)
    expect(await page.locator('#viewer').textContent()).toBe('dave')
    expect(await page.locator('#empty').isVisible()).toBe(true)

    const waiting = pay(KEYS.alice, { to: 'mallory', amount: 700 }, { prefer: 'wait=30' })
    const card = page.locator('article.card', { hasText: 'mallory' })
    await card.waitFor({ timeout: 15_000 })
    const text = await card.textContent() ?? ''
    for (const shown of ['pay', 'Pay an amount; above 100 a person approves first.', 'financial', 'irreversible', '"amount": 700', 'alice', 'anyone with tools:approve']) expect(text).toContain(shown)
    expect(await card.locator('time').first().textContent()).toMatch(/now|second/)
    expect(await card.locator('time').nth(1).textContent()).toMatch(/^in \d+ minutes$/)
    await page.setViewportSize({ width: 1280, height: 900 })
    await page.screenshot({ path: join(SHOTS, 'approvals-desktop.png'), fullPage: true })
    await page.setViewportSize({ width: 390, height: 844 })
    await page.screenshot({ path: join(SHOTS, 'approvals-phone.png'), fullPage: true })
    console.info(`[screenshots] ${SHOTS}`)

    await card.locator('input[name="note"]').fill('checked with alice')
    await card.locator('button[data-action="approve"]').click()
    await card.locator('.status.approved').waitFor({ timeout: 10_000 })
    const done = await waiting
    expect(done.status).toBe(200)
    expect(await done.json()).toMatchObject({ paid: 700, to: 'mallory' })
    expect(executions.filter(e => e === 'pay:mallory:700')).toHaveLength(1)
    // The decision shows under recent decisions, with who decided and the note.
    const decision = page.locator('#recent li', { hasText: 'checked with alice' })
    await decision.waitFor({ timeout: 10_000 })
    expect(await decision.textContent()).toMatch(/pay\s*approved\s*by dave/)
    await page.screenshot({ path: join(SHOTS, 'approvals-decided-phone.png'), fullPage: true })
    expect(await page.locator('#announce').textContent()).toContain('New request: pay by alice.')
    expect(navigations()).toBe(1)
    expect(errors).toEqual([])
    await page.close()
  }, SLOW.BROWSER_MS)

  it('input is shown as text, never markup, and a large input is folded', async () => {
    const to = `<img src=x id=injected onerror="document.title='owned'">${'x'.repeat(2_000)}`
    expect((await pay(KEYS.alice, { to, amount: 900 })).status).toBe(202)
    const { page } = await signedInPage(KEYS.dave)
    const card = page.locator('article.card', { hasText: 'img src=x' })
    await card.waitFor({ timeout: 10_000 })
    expect(await page.locator('#injected').count()).toBe(0)
    const folded = card.locator('.input details')
    expect(await folded.getAttribute('open')).toBeNull()
    expect(await folded.locator('summary').textContent()).toMatch(/Show the whole input \(\d+ lines, 2\.\d kB\)/)
    await folded.locator('summary').focus()
    await page.keyboard.press('Enter') // keyboard opens it
    expect(await folded.getAttribute('open')).toBe('')
    expect(await folded.locator('pre').textContent()).toContain(to.replaceAll('"', '\\"'))
    expect(await page.title()).not.toBe('owned')
    await page.close()
  }, SLOW.BROWSER_MS)

  it('a requester sees only their own requests and no decision buttons; the approvers a rule names are shown', async () => {
    expect((await pay(KEYS.carol, { to: 'trent', amount: 300 })).status).toBe(202)
    const { page } = await signedInPage(KEYS.carol)
    const own = page.locator('article.card', { hasText: 'trent' })
    await own.waitFor({ timeout: 10_000 })
    expect(await page.locator('article.card').count()).toBe(1) // alice's request is not carol's to see
    expect(await own.locator('button').count()).toBe(0)
    expect(await own.textContent()).toContain('bob, dave')
    expect(await page.locator('#scope-note').textContent()).toContain('tools:approve')
    await page.close()
  }, SLOW.BROWSER_MS)

  it('a wrong key is refused on the page; Sign out forgets the key', async () => {
    const page = await gateway.browser.newPage()
    await page.goto(`${gateway.base}/approvals/ui`)
    await page.locator('#key').fill('not-a-key-0123456789')
    await page.keyboard.press('Enter')
    await expect.poll(async () => await page.locator('#signin-error').textContent()).toBe('That key was not accepted.')
    expect(await page.evaluate('sessionStorage.length')).toBe(0)
    await page.close()

    const { page: signed } = await signedInPage(KEYS.bob)
    expect(await signed.evaluate("sessionStorage.getItem('toolgate-approvals-key')")).toBe(KEYS.bob)
    await signed.locator('#signout').click()
    await signed.locator('#signin').waitFor()
    expect(await signed.evaluate('sessionStorage.length')).toBe(0)
    // Without the key, what the page shows is refused.
    expect(await signed.evaluate("fetch('ui/feed').then(r => r.status)")).toBe(401)
    await signed.close()
  }, SLOW.BROWSER_MS)
})
