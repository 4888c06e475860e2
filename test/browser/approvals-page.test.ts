import { describe, expect, it } from 'vitest'
import { SLOW } from '../slow.js'
import { buildApp } from '../../plugins/app.js'
import { hashApiKey } from '../../src/services/auth/index.js'
import { loadConfig } from '../../src/services/config.js'
import { createLedgerTools, LARGE_TRANSFER_CENTS } from '../../tools/ledger.js'
import { MemoryLedgerStore } from '../../tools/ledger/store.js'
import { browserGateway, HAVE_CHROMIUM } from './chromium.js'

/*
 * The approvals page in a real browser: Debian's chromium, driven by playwright-core. The
 * approver's credential is a header on every request the browser makes (as an auth proxy
 * would add it), so the page and its fetch POST are authenticated the same way as the API.
 */

const KEYS = { agent: 'agent-key-0123456789', approver: 'approver-key-0123456789' }
const gateway = browserGateway(async () => {
  const config = loadConfig({}, {
    apiKeys: [
      { principal: 'agent', sha256: hashApiKey(KEYS.agent), scopes: ['tools:read', 'tools:call', 'ledger:transfer', 'ledger:transfer:large'] },
      { principal: 'approver', sha256: hashApiKey(KEYS.approver), scopes: ['tools:read', 'tools:approve'] },
    ],
  })
  const tools = createLedgerTools(new MemoryLedgerStore({ alice: 200_000, bob: 0 }), { approvalAboveCents: LARGE_TRANSFER_CENTS })
  return await buildApp({ config, tools })
})

const transfer = (headers: Record<string, string>, body: object) =>
  fetch(`${gateway.base}/tools/ledger_transfer`, { method: 'POST', headers: { 'content-type': 'application/json', 'x-api-key': KEYS.agent, ...headers }, body: JSON.stringify(body) })

async function pendingIds (): Promise<string[]> {
  const response = await fetch(`${gateway.base}/approvals`, { headers: { 'x-api-key': KEYS.approver } })
  return ((await response.json()) as { approvals: Array<{ id: string }> }).approvals.map(a => a.id)
}

describe.skipIf(!HAVE_CHROMIUM)('the approvals page in headless Chromium', () => {
  it('shows a pending transfer with its effects and input; clicking Approve lets the waiting transfer complete', async () => {
    const order = { from: 'alice', to: 'bob', amount: 75_000 }
    // The agent waits for the decision in its first call (Prefer: wait).
    const waiting = transfer({ prefer: 'wait=30' }, order)
    let ids: string[] = []
    for (let i = 0; ids.length === 0 && i < 100; i++) {
      await new Promise(resolve => setTimeout(resolve, 50))
      ids = await pendingIds()
    }
    expect(ids).toHaveLength(1)

    const context = await gateway.browser.newContext({ extraHTTPHeaders: { 'x-api-key': KEYS.approver } })
    const page = await context.newPage()
    const errors: string[] = []
    page.on('pageerror', error => { errors.push(error.message) })
    page.on('console', message => { if (message.type() === 'error') errors.push(message.text()) })
    const response = await page.goto(`${gateway.base}/approvals/ui`)
    expect(response?.status()).toBe(200)
    const row = page.locator(`tr[data-id="${ids[0]}"]`)
    await expect(row.locator('td').first().textContent()).resolves.toContain('ledger_transfer')
    const text = await row.textContent()
    for (const shown of ['financial', 'irreversible', 'affects-others', '"amount": 75000', '"from": "alice"', 'agent']) expect(text).toContain(shown)

    await row.locator('input[name="note"]').fill('checked with alice')
    await row.locator('button[data-action="approve"]').click()
    await row.locator('.status.approved').waitFor({ timeout: 10_000 })
    expect(errors).toEqual([])
    await context.close()

    const done = await waiting
    expect(done.status).toBe(200)
    expect(done.headers.get('preference-applied')).toBe('wait=30')
    expect(await done.json()).toMatchObject({ from: 'alice', to: 'bob', amount: 75_000, balancesAfter: { alice: 125_000, bob: 75_000 } })
    const approval = await (await fetch(`${gateway.base}/approvals/${ids[0]}`, { headers: { 'x-api-key': KEYS.agent } })).json()
    expect(approval).toMatchObject({ status: 'consumed', decidedBy: 'approver', note: 'checked with alice' })
  }, SLOW.BROWSER_MS)

  it('Reject from the page: the retry is refused with the note and no money moves', async () => {
    const order = { from: 'alice', to: 'bob', amount: 60_000 }
    const asked = await transfer({}, order)
    expect(asked.status).toBe(202)
    const { id } = await asked.json() as { id: string }
    expect(asked.headers.get('location')).toBe(`/approvals/${id}`)
    const context = await gateway.browser.newContext({ extraHTTPHeaders: { 'x-api-key': KEYS.approver } })
    const page = await context.newPage()
    await page.goto(`${gateway.base}/approvals/ui`)
    const row = page.locator(`tr[data-id="${id}"]`)
    await row.locator('input[name="note"]').fill('not today')
    await row.locator('button[data-action="reject"]').click()
    await row.locator('.status.rejected').waitFor({ timeout: 10_000 })
    await context.close()
    const retry = await transfer({ 'approval-id': id, 'idempotency-key': 'ignored-key' }, order)
    expect(retry.status).toBe(403)
    expect(await retry.json()).toMatchObject({ code: 'TOOLGATE_APPROVAL_REJECTED', note: 'not today' })
    const balances = await (await fetch(`${gateway.base}/tools/ledger_balance`, { method: 'POST', headers: { 'content-type': 'application/json', 'x-api-key': KEYS.agent }, body: '{}' })).json()
    expect(balances).toMatchObject({ accounts: [{ account: 'alice', balance: 125_000 }, { account: 'bob', balance: 75_000 }] })
  }, SLOW.BROWSER_MS)
})
