import { mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { Client } from '@modelcontextprotocol/sdk/client/index.js'
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js'
import type { Page } from 'playwright-core'
import { describe, expect, it } from 'vitest'
import { buildApp } from '../../plugins/app.js'
import { hashApiKey } from '../../src/services/auth/api-keys.js'
import { loadConfig } from '../../src/services/config.js'
import { approvalTools } from '../approvals/helpers.js'
import { SLOW } from '../slow.js'
import { fixture, linesOf, tempDir, upstreamsFile } from '../upstreams/helpers.js'
import { browserGateway, HAVE_CHROMIUM } from './chromium.js'

/*
 * The operators' console in a real browser (Debian's chromium, driven by playwright-core):
 * signed in with a key of `gateway:read`, it shows a REST call and an MCP call as they finish,
 * filters them and the catalog by effect, opens a fronted tool's declared-by fields, follows an
 * upstream going down and coming back, and catches a tampered audit line; a key without the
 * scope sees nothing. `CONSOLE_SHOTS=docs/images` writes the screenshots the docs show.
 */

const KEYS = { ops: 'ops-key-0123456789abc', alice: 'alice-key-0123456789a' } as const
const dir = tempDir('toolgate-console-')
const audit = join(dir, 'audit.log')
const gate = join(dir, 'down')
const shots = process.env.CONSOLE_SHOTS ?? join(dir, 'shots')
mkdirSync(shots, { recursive: true })

const gateway = browserGateway(async () => {
  const config = loadConfig({}, {
    apiKeys: [
      { principal: 'ops', sha256: hashApiKey(KEYS.ops), scopes: ['tools:read', 'tools:call', 'gateway:read'] },
      { principal: 'alice', sha256: hashApiKey(KEYS.alice), scopes: ['tools:read', 'tools:call'] },
    ],
    auditLog: audit,
    approvalRules: [{ principal: '*', tools: ['up_die'], approvers: ['ops'] }],
    upstreamsFile: upstreamsFile({
      mcpServers: { up: fixture(dir, { FIXTURE_DOWN_WHILE: gate }) },
      tools: { up_record: { effects: ['external', 'affects-others'], authorize: 'principal.id != "mallory"' } },
    }),
  })
  return await buildApp({ config, tools: approvalTools([]) })
})

async function openConsole (key: string): Promise<{ page: Page, errors: string[] }> {
  const page = await gateway.browser.newPage({ viewport: { width: 1280, height: 900 } })
  const errors: string[] = []
  page.on('pageerror', error => { errors.push(error.message) })
  page.on('console', message => { if (message.type() === 'error' && !/\b40[13]\b/.test(message.text())) errors.push(message.text()) })
  const response = await page.goto(`${gateway.base}/console`)
  expect(response?.status()).toBe(200)
  const headers = response?.headers() ?? {}
  expect(headers['content-security-policy']).toMatch(/default-src 'none'; script-src 'nonce-[^']+'; style-src 'nonce-[^']+';.*connect-src 'self';.*frame-ancestors 'none'/)
  expect(headers['x-frame-options']).toBe('DENY')
  await page.locator('#key').fill(key)
  await page.keyboard.press('Enter')
  return { page, errors }
}

/** Some calls for the screenshots' charts: most succeed, some are refused, some wait for approval. */
async function traffic (ms: number): Promise<void> {
  const until = Date.now() + ms
  for (let i = 0; Date.now() < until; i++) {
    const body = i % 7 === 0 ? { to: 'bob' } : { to: 'bob', amount: i % 11 === 0 ? 500 : 10 + (i % 40) }
    await fetch(`${gateway.base}/tools/${i % 3 === 0 ? 'echo' : 'pay'}`, { method: 'POST', headers: { 'content-type': 'application/json', 'x-api-key': KEYS.ops }, body: JSON.stringify(i % 3 === 0 ? { text: 'hi' } : body) })
    await new Promise(resolve => setTimeout(resolve, 60))
  }
}

const rows = (page: Page, text: string) => page.locator('#calls tr:not(.detail)', { hasText: text })

describe.skipIf(!HAVE_CHROMIUM)('the operators\' console in Chromium', { timeout: 4 * SLOW.BROWSER_MS }, () => {
  it('refuses a principal without gateway:read and shows it nothing', async () => {
    const { page, errors } = await openConsole(KEYS.alice)
    await expect.poll(async () => await page.locator('#signin-error').textContent()).toContain('gateway:read')
    expect(await page.locator('#board').isVisible()).toBe(false)
    expect(await page.locator('#calls tr').count()).toBe(0)
    const direct = await fetch(`${gateway.base}/console/calls`, { headers: { 'x-api-key': KEYS.alice } })
    expect(direct.status).toBe(403)
    expect(errors).toEqual([])
    await page.close()
  })

  it('shows REST and MCP calls live, filters by effect, opens declared-by fields, follows an upstream down and up, and catches a tampered audit line', async () => {
    const { page, errors } = await openConsole(KEYS.ops)
    await page.locator('#board').waitFor()
    await expect.poll(async () => await page.locator('#viewer').textContent()).toBe('ops')
    await page.locator('#upstreams tr', { hasText: 'up' }).waitFor()

    // A REST call and an MCP call, made while the page is open, appear without a reload.
    const paid = await fetch(`${gateway.base}/tools/pay`, { method: 'POST', headers: { 'content-type': 'application/json', 'x-api-key': KEYS.ops }, body: JSON.stringify({ to: 'bob', amount: 40 }) })
    expect(paid.status).toBe(200)
    const client = new Client({ name: 'console-test', version: '1.0.0' })
    await client.connect(new StreamableHTTPClientTransport(new URL(`${gateway.base}/mcp`), { requestInit: { headers: { 'x-api-key': KEYS.ops } } }))
    const recorded = await client.callTool({ name: 'up_record', arguments: { tag: 'from-mcp' } })
    expect(recorded.isError).not.toBe(true)
    await client.close()
    await rows(page, 'pay').waitFor({ timeout: 15_000 })
    await rows(page, 'up_record').waitFor({ timeout: 15_000 })
    expect(await rows(page, 'up_record').textContent()).toContain('mcp')
    expect(await rows(page, 'pay').textContent()).toContain('financial')

    // Filter by effect: only the financial call stays.
    await page.locator('#calls-effect').selectOption('financial')
    await expect.poll(async () => await rows(page, 'up_record').count()).toBe(0)
    expect(await rows(page, 'pay').count()).toBe(1)
    await page.locator('#calls-effect').selectOption('')

    // A call opens to its audit line (input never shown).
    await rows(page, 'pay').click()
    await expect.poll(async () => await page.locator('#calls tr.detail pre').textContent()).toContain('"tool": "pay"')
    expect(await page.locator('#calls tr.detail pre').textContent()).not.toContain('"input"')

    // The catalog filtered by effect; the fronted tool opens to who declared each field.
    await page.locator('#tools-effect').selectOption('affects-others')
    await expect.poll(async () => await page.locator('#tools details.tool').count()).toBe(1)
    const tool = page.locator('#tools details.tool', { hasText: 'up_record' })
    await tool.locator('summary').first().click()
    const declared = tool.locator('table.declared tr', { hasText: 'effects' })
    await declared.waitFor()
    expect(await declared.textContent()).toContain('operator')
    expect(await tool.locator('table.declared tr', { hasText: 'description' }).textContent()).toContain('upstream')
    expect(await tool.textContent()).toContain('principal.id != "mallory"')

    // Charts drawn from the gateway's own metrics (a point every 5 s).
    await page.locator('#chart-outcomes canvas').waitFor({ timeout: 15_000 })
    await page.locator('#tools-effect').selectOption('')
    if (process.env.CONSOLE_SHOTS !== undefined) await traffic(16_000)
    await page.mouse.wheel(0, -100_000)
    await page.screenshot({ path: join(shots, 'console-desktop.png'), fullPage: true })
    await page.setViewportSize({ width: 390, height: 844 })
    await page.screenshot({ path: join(shots, 'console-phone.png'), fullPage: false })
    await page.setViewportSize({ width: 1280, height: 900 })

    // The upstream goes down (its process killed, restarts refused) and comes back.
    writeFileSync(gate, '')
    process.kill(Number(linesOf(dir, 'starts.log').at(-1)), 'SIGKILL')
    const upstream = page.locator('#upstreams tr', { hasText: 'up' })
    await expect.poll(async () => await upstream.getAttribute('data-state'), { timeout: 20_000 }).not.toBe('up')
    await expect.poll(async () => await page.locator('#tools details.tool', { hasText: 'up_record' }).textContent(), { timeout: 20_000 }).toContain('upstream')
    rmSync(gate)
    await expect.poll(async () => await upstream.getAttribute('data-state'), { timeout: 45_000 }).toBe('up')

    // The chain verifies; then one line is changed on disk, and the verification names it.
    await page.locator('#verify').click()
    await expect.poll(async () => await page.locator('#verdict').textContent()).toMatch(/^Intact: \d+ records/)
    const lines = readFileSync(audit, 'utf8').split('\n')
    const at = lines.findIndex(line => line.includes('"tool":"pay"'))
    expect(at).toBeGreaterThanOrEqual(0)
    lines[at] = lines[at]!.replace('"principal":"ops"', '"principal":"eve"')
    writeFileSync(audit, lines.join('\n'))
    await page.locator('#verify').click()
    await expect.poll(async () => await page.locator('#verdict').textContent()).toContain(`Broken at line ${at + 1}: changed`)
    expect(errors).toEqual([])
    await page.close()
  })
})
