import { randomUUID } from 'node:crypto'
import { describe, expect, it } from 'vitest'
import shipped, { createLedgerTools, LARGE_TRANSFER_CENTS, MAX_TRANSFER_CENTS } from '../../tools/ledger.js'
import { DEMO_ACCOUNTS, MemoryLedgerStore } from '../../tools/ledger/store.js'
import { expectFailure, fakeApp, harness } from './app.js'

const payer = fakeApp({ principal: { id: 'payer', scopes: ['tools:call', 'ledger:transfer'] } })
const bigPayer = fakeApp({ principal: { id: 'big', scopes: ['tools:call', 'ledger:transfer', 'ledger:transfer:large'] } })
const reader = fakeApp({ principal: { id: 'reader', scopes: ['tools:call'] } })

function ledger (seed: Record<string, number> = DEMO_ACCOUNTS) {
  return harness(createLedgerTools(new MemoryLedgerStore(seed)), payer)
}

async function balances (h: ReturnType<typeof ledger>): Promise<Record<string, number>> {
  const { value } = await h.call<{ accounts: Array<{ account: string, balance: number }> }>('ledger_balance', {})
  return Object.fromEntries(value.accounts.map(a => [a.account, a.balance]))
}

describe('ledger_balance', () => {
  it('lists the demo accounts in cents', async () => {
    const { value } = await ledger().call('ledger_balance', {}, { app: reader })
    expect(value).toEqual({ currency: 'USD', accounts: [{ account: 'alice', balance: 10_000 }, { account: 'bob', balance: 5_000 }, { account: 'carol', balance: 0 }] })
  })

  it('reads one account, and an unknown one is 404 ACCOUNT_NOT_FOUND', async () => {
    const h = ledger()
    const { value, record } = await h.call('ledger_balance', { account: 'bob' })
    expect(value).toEqual({ currency: 'USD', accounts: [{ account: 'bob', balance: 5_000 }] })
    expect(record.touchedResources).toEqual(['ledger:bob'])
    await expectFailure(h.call('ledger_balance', { account: 'mallory' }), 404, 'ACCOUNT_NOT_FOUND')
  })
})

describe('ledger_transfer', () => {
  it('requires an idempotency key (after authorization)', async () => {
    const h = ledger()
    await expectFailure(h.call('ledger_transfer', { from: 'alice', to: 'bob', amount: 1 }), 400, 'TOOLGATE_IDEMPOTENCY_KEY_REQUIRED')
  })

  it('moves cents between two accounts and returns a receipt', async () => {
    const h = ledger()
    const { value, record } = await h.call('ledger_transfer', { from: 'alice', to: 'carol', amount: 2_500 }, { idempotencyKey: randomUUID() })
    expect(value).toMatchObject({ from: 'alice', to: 'carol', amount: 2_500, currency: 'USD', balancesAfter: { alice: 7_500, carol: 2_500 } })
    expect(await balances(h)).toEqual({ alice: 7_500, bob: 5_000, carol: 2_500 })
    expect(record.touchedResources).toEqual(['ledger:alice', 'ledger:carol'])
    expect(record.mutatedResources).toEqual(['ledger:alice', 'ledger:carol'])
    expect(record.debugSteps).toEqual([
      { name: 'debit', data: { account: 'alice', amount: 2_500, balanceAfter: 7_500 } },
      { name: 'credit', data: { account: 'carol', amount: 2_500, balanceAfter: 2_500 } },
    ])
  })

  it('may empty an account exactly', async () => {
    const h = ledger()
    await h.call('ledger_transfer', { from: 'bob', to: 'carol', amount: 5_000 }, { idempotencyKey: randomUUID() })
    expect(await balances(h)).toMatchObject({ bob: 0, carol: 5_000 })
  })

  it('refuses to overdraw: 409 INSUFFICIENT_FUNDS, balances unchanged', async () => {
    const h = ledger()
    await expectFailure(h.call('ledger_transfer', { from: 'carol', to: 'alice', amount: 1 }, { idempotencyKey: randomUUID() }), 409, 'INSUFFICIENT_FUNDS')
    await expectFailure(h.call('ledger_transfer', { from: 'bob', to: 'alice', amount: 5_001 }, { idempotencyKey: randomUUID() }), 409, 'INSUFFICIENT_FUNDS')
    expect(await balances(h)).toEqual(DEMO_ACCOUNTS)
  })

  it('an unknown account is 404 ACCOUNT_NOT_FOUND, on either side, and nothing moves', async () => {
    const h = ledger()
    await expectFailure(h.call('ledger_transfer', { from: 'mallory', to: 'alice', amount: 1 }, { idempotencyKey: randomUUID() }), 404, 'ACCOUNT_NOT_FOUND')
    await expectFailure(h.call('ledger_transfer', { from: 'alice', to: 'mallory', amount: 1 }, { idempotencyKey: randomUUID() }), 404, 'ACCOUNT_NOT_FOUND')
    expect(await balances(h)).toEqual(DEMO_ACCOUNTS)
  })

  it('validates amounts (positive integer cents, capped) and distinct accounts by schema', async () => {
    const h = ledger()
    for (const amount of [0, -5, 1.5, '100', MAX_TRANSFER_CENTS + 1, Number.NaN]) {
      await expectFailure(h.call('ledger_transfer', { from: 'alice', to: 'bob', amount }, { idempotencyKey: randomUUID() }), 400, 'TOOLGATE_INVALID_INPUT')
    }
    const error = await expectFailure(h.call('ledger_transfer', { from: 'alice', to: 'alice', amount: 1 }, { idempotencyKey: randomUUID() }), 400, 'TOOLGATE_INVALID_INPUT')
    expect(error.extensions.errors).toEqual([expect.objectContaining({ pointer: '/to' })])
    await expectFailure(h.call('ledger_transfer', { from: 'Alice', to: 'bob', amount: 1 }, { idempotencyKey: randomUUID() }), 400, 'TOOLGATE_INVALID_INPUT')
    expect(await balances(h)).toEqual(DEMO_ACCOUNTS)
  })

  it('authorize denies a principal without the ledger:transfer scope', async () => {
    const h = ledger()
    const error = await expectFailure(h.call('ledger_transfer', { from: 'alice', to: 'bob', amount: 1 }, { app: reader, idempotencyKey: randomUUID() }), 403, 'TOOLGATE_DENIED')
    expect(error.message).toMatch(/ledger:transfer/)
    expect(await balances(h)).toEqual(DEMO_ACCOUNTS)
  })

  it('above the approval line a transfer waits for a person and moves nothing; the shipped ledger draws the line at 500.00', async () => {
    const h = harness(createLedgerTools(new MemoryLedgerStore({ rich: 10_000_000, poor: 0 }), { approvalAboveCents: 1_000 }), bigPayer)
    const { approval } = await h.call('ledger_transfer', { from: 'rich', to: 'poor', amount: 1_001 }, { idempotencyKey: randomUUID() })
    expect(approval).toMatchObject({ status: 'pending', tool: 'ledger_transfer', effects: ['affects-others', 'financial', 'irreversible'], input: { from: 'rich', to: 'poor', amount: 1_001 } })
    await h.call('ledger_transfer', { from: 'rich', to: 'poor', amount: 1_000 }, { idempotencyKey: randomUUID() })
    expect(await balances(h)).toEqual({ rich: 10_000_000 - 1_000, poor: 1_000 })
    const transfer = shipped.find(tool => tool.id === 'ledger_transfer')!
    const requires = transfer.requiresApproval as (input: unknown, ctx: unknown) => boolean
    expect([requires({ amount: LARGE_TRANSFER_CENTS }, {}), requires({ amount: LARGE_TRANSFER_CENTS + 1 }, {})]).toEqual([false, true])
  })

  it('authorize denies a large transfer without ledger:transfer:large, before any funds check', async () => {
    const h = ledger({ rich: 10_000_000, poor: 0 })
    const error = await expectFailure(h.call('ledger_transfer', { from: 'rich', to: 'poor', amount: LARGE_TRANSFER_CENTS + 1 }, { idempotencyKey: randomUUID() }), 403, 'TOOLGATE_DENIED')
    expect(error.message).toMatch(/ledger:transfer:large/)
    await h.call('ledger_transfer', { from: 'rich', to: 'poor', amount: LARGE_TRANSFER_CENTS }, { idempotencyKey: randomUUID() })
    await h.call('ledger_transfer', { from: 'rich', to: 'poor', amount: LARGE_TRANSFER_CENTS + 1 }, { app: bigPayer, idempotencyKey: randomUUID() })
    expect(await balances(h)).toEqual({ rich: 10_000_000 - 2 * LARGE_TRANSFER_CENTS - 1, poor: 2 * LARGE_TRANSFER_CENTS + 1 })
  })

  it('dry run returns the proposal with balances after, and moves nothing', async () => {
    const h = ledger()
    const { value, record } = await h.call('ledger_transfer', { from: 'alice', to: 'bob', amount: 1_000 }, { dryRun: true })
    expect(value).toEqual({
      from: 'alice', to: 'bob', amount: 1_000, currency: 'USD',
      balancesBefore: { alice: 10_000, bob: 5_000 }, balancesAfter: { alice: 9_000, bob: 6_000 },
    })
    expect(record).toMatchObject({ outcome: 'dry_run', executed: false })
    expect(await balances(h)).toEqual(DEMO_ACCOUNTS)
  })

  it('dry run reports the failure the transfer would meet', async () => {
    const h = ledger()
    await expectFailure(h.call('ledger_transfer', { from: 'carol', to: 'bob', amount: 1 }, { dryRun: true }), 409, 'INSUFFICIENT_FUNDS')
    await expectFailure(h.call('ledger_transfer', { from: 'zed', to: 'bob', amount: 1 }, { dryRun: true }), 404, 'ACCOUNT_NOT_FOUND')
  })

  it('dry run still runs authorize', async () => {
    await expectFailure(ledger().call('ledger_transfer', { from: 'alice', to: 'bob', amount: 1 }, { app: reader, dryRun: true, idempotencyKey: randomUUID() }), 403, 'TOOLGATE_DENIED')
  })

  it('is refused in plan mode', async () => {
    await expectFailure(ledger().call('ledger_transfer', { from: 'alice', to: 'bob', amount: 1 }, { bind: { mode: 'plan' }, idempotencyKey: randomUUID() }), 403, 'TOOLGATE_PLAN_MODE')
  })

  it('concurrent transfers from many sessions never overdraw', async () => {
    const h = ledger({ src: 1_000, dst: 0 })
    const calls = Array.from({ length: 30 }, (_, i) => h.call('ledger_transfer', { from: 'src', to: 'dst', amount: 100 }, { app: fakeApp({ principal: payer.principal, domain: `s${i}` }), idempotencyKey: randomUUID() }))
    const results = await Promise.allSettled(calls)
    expect(results.filter(r => r.status === 'fulfilled')).toHaveLength(10)
    expect(await balances(h)).toEqual({ src: 0, dst: 1_000 })
  })

  it('parseOutput rejects a replayed receipt that breaks the invariants', () => {
    const transfer = shipped.find(t => t.id === 'ledger_transfer')!
    const good = { transferId: '6f1c2d3e-4a5b-4c6d-8e9f-0a1b2c3d4e5f', at: '2025-01-01T00:00:00.000Z', from: 'alice', to: 'bob', amount: 1, currency: 'USD', balancesAfter: { alice: 1, bob: 1 } }
    expect(transfer.parseOutput(good)).toEqual(good)
    expect(() => transfer.parseOutput({ ...good, balancesAfter: { alice: -1, bob: 1 } })).toThrow()
    expect(() => transfer.parseOutput({ ...good, balancesAfter: { alice: 1, mallory: 1 } })).toThrow()
    expect(() => transfer.parseOutput({ ...good, amount: 0 })).toThrow()
  })

  it('declares financial, irreversible, affects-others and requires an idempotency key', () => {
    const transfer = shipped.find(t => t.id === 'ledger_transfer')!
    expect(transfer).toMatchObject({
      effects: ['affects-others', 'financial', 'irreversible'], isReadOnly: false, isConcurrencySafe: false, requiresIdempotencyKey: true,
    })
    expect(shipped.find(t => t.id === 'ledger_balance')).toMatchObject({ isReadOnly: true, effects: [] })
  })
})
