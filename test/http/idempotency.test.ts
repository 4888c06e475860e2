import { describe, expect, it, vi } from 'vitest'
import { z } from 'zod'
import { defineTool, ToolError } from '../../src/index.js'
import { auth, KEYS, testApp } from './helpers.js'
import { expectProblem } from './problem-shape.js'

/** A tiny ledger in the test: the balance proves how often a transfer really ran. */
function ledgerTools (state = { balance: 100, runs: 0, gate: Promise.resolve() as Promise<unknown> }) {
  const transfer = defineTool({
    id: 'pay', kind: 'write', description: 'Pay an amount.', effects: ['financial', 'irreversible'],
    isReadOnly: false, isConcurrencySafe: false, requiresIdempotencyKey: true, authorize ({ amount }) { if (amount === 13) throw new Error('unlucky') },
    inputSchema: z.object({ amount: z.number().int().positive() }), outputSchema: z.object({ balance: z.number() }),
    execute: async ({ amount }) => {
      state.runs++
      await state.gate
      if (amount > state.balance) throw new ToolError(409, 'INSUFFICIENT_FUNDS', 'not enough')
      state.balance -= amount
      return { balance: state.balance }
    },
  })
  return { state, tools: [transfer] }
}

const pay = (amount: number, key?: string, apiKey: string = KEYS.admin) => ({
  method: 'POST' as const, url: '/tools/pay', payload: { amount },
  headers: { ...auth(apiKey), ...(key === undefined ? {} : { 'idempotency-key': key }) },
})

describe('Idempotency-Key over HTTP', () => {
  it('a repeat replays the stored success with Idempotent-Replayed and runs nothing again', async () => {
    const { state, tools } = ledgerTools()
    const app = await testApp({}, tools)
    const first = await app.inject(pay(30, 'k1'))
    const second = await app.inject(pay(30, 'k1'))
    expect(first.json()).toEqual({ balance: 70 })
    expect(second.json()).toEqual({ balance: 70 })
    expect(first.headers['idempotent-replayed']).toBeUndefined()
    expect(second.headers['idempotent-replayed']).toBe('true')
    expect(state.runs).toBe(1)
    expect(state.balance).toBe(70)
  })

  it('the same key with another input is 422', async () => {
    const { state, tools } = ledgerTools()
    const app = await testApp({}, tools)
    await app.inject(pay(30, 'k2'))
    expectProblem(await app.inject(pay(31, 'k2')), 422, 'TOOLGATE_IDEMPOTENCY_MISMATCH')
    expect(state.runs).toBe(1)
  })

  it('the same key while the first call runs is 409, then the stored result', async () => {
    let open!: () => void
    const { state, tools } = ledgerTools({ balance: 100, runs: 0, gate: new Promise<void>(resolve => { open = resolve }) })
    const app = await testApp({}, tools)
    const first = app.inject(pay(10, 'k3'))
    await vi.waitFor(() => { expect(state.runs).toBe(1) }, { timeout: 5_000, interval: 5 }) // it runs (its key claimed), however slow the machine
    const during = await app.inject({ ...pay(10, 'k3'), headers: { ...pay(10, 'k3').headers, 'x-session-id': 'other' } })
    expectProblem(during, 409, 'TOOLGATE_CONFLICT')
    expect(during.headers['retry-after']).toBeDefined()
    open()
    expect((await first).json()).toEqual({ balance: 90 })
    expect((await app.inject(pay(10, 'k3'))).json()).toEqual({ balance: 90 })
    expect(state.runs).toBe(1)
  })

  it('stored errors replay too, once execute began', async () => {
    const { state, tools } = ledgerTools()
    const app = await testApp({}, tools)
    expectProblem(await app.inject(pay(500, 'k4')), 409, 'INSUFFICIENT_FUNDS')
    const replay = await app.inject(pay(500, 'k4'))
    expectProblem(replay, 409, 'INSUFFICIENT_FUNDS')
    expect(replay.headers['idempotent-replayed']).toBe('true')
    expect(state.runs).toBe(1)
  })

  it('nothing is stored for a call that never reached execute: the key stays free', async () => {
    const { state, tools } = ledgerTools()
    const app = await testApp({}, tools)
    expectProblem(await app.inject(pay(-1, 'k5')), 400, 'TOOLGATE_INVALID_INPUT')
    expectProblem(await app.inject(pay(13, 'k5')), 403, 'TOOLGATE_DENIED')
    expect((await app.inject(pay(20, 'k5'))).json()).toEqual({ balance: 80 })
    expect(state.runs).toBe(1)
  })

  it('keys are scoped per principal: two callers never see each other\'s results', async () => {
    const { state, tools } = ledgerTools()
    const app = await testApp({}, tools)
    await app.inject(pay(10, 'shared'))
    const other = await app.inject(pay(10, 'shared', KEYS.caller))
    expect(other.headers['idempotent-replayed']).toBeUndefined()
    expect(other.json()).toEqual({ balance: 80 })
    expect(state.runs).toBe(2)
  })

  it('a tool that requires a key refuses a call without one; a malformed or too long key is 400', async () => {
    const { state, tools } = ledgerTools()
    const app = await testApp({}, tools)
    expectProblem(await app.inject(pay(10)), 400, 'TOOLGATE_IDEMPOTENCY_KEY_REQUIRED')
    expectProblem(await app.inject(pay(10, 'k'.repeat(256))), 400, 'TOOLGATE_INVALID_IDEMPOTENCY_KEY')
    expectProblem(await app.inject(pay(10, 'has space')), 400, 'TOOLGATE_INVALID_IDEMPOTENCY_KEY')
    expect((await app.inject(pay(10, 'k'.repeat(255)))).statusCode).toBe(200)
    expect(state.runs).toBe(1)
  })

  it('a caller who lost access gets no stored result: auth and authorize run before any replay', async () => {
    const { tools } = ledgerTools()
    const app = await testApp({ rules: [{ principal: 'admin', allow: ['*'], deny: [] }] }, tools)
    expect((await app.inject(pay(10, 'k6'))).statusCode).toBe(200)
    expectProblem(await app.inject({ ...pay(10, 'k6'), headers: { 'idempotency-key': 'k6' } }), 401, 'TOOLGATE_UNAUTHENTICATED')
  })
})

describe('idempotency shares over HTTP', () => {
  it('a principal whose share is full gets 429 problem+json with Retry-After for a new key; another principal is unaffected', async () => {
    const { state, tools } = ledgerTools({ balance: 1_000_000, runs: 0, gate: Promise.resolve() })
    const app = await testApp({ idempotencyMaxBytesPerPrincipal: 4096 }, tools)
    let status = 200
    let response
    for (let i = 0; i < 100 && status === 200; i++) {
      response = await app.inject(pay(1, `flood-${i}`, KEYS.caller))
      status = response.statusCode
    }
    expectProblem(response!, 429, 'TOOLGATE_IDEMPOTENCY_QUOTA')
    expect(Number(response!.headers['retry-after'])).toBeGreaterThan(0)
    const runs = state.runs
    expect((await app.inject(pay(1, 'admin-key-1'))).statusCode).toBe(200)
    expect(state.runs).toBe(runs + 1)
  })
})
