import { mkdtempSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import type { FastifyInstance } from 'fastify'
import { afterEach, describe, expect, it } from 'vitest'
import { z } from 'zod'
import { buildApp } from '../../plugins/app.js'
import { defineTool, type AnyTool } from '../../src/index.js'
import { hashApiKey } from '../../src/services/auth/api-keys.js'
import { loadConfig, type ConfigInput } from '../../src/services/config.js'
import { MemoryLedgerStore } from '../../tools/ledger/store.js'
import { createLedgerTools } from '../../tools/ledger.js'
import { expectProblem } from './problem-shape.js'

const KEYS = { alice: 'alice-key-0123456789', bob: 'bob-key-0123456789' } as const
const API_KEYS = [
  { principal: 'alice', sha256: hashApiKey(KEYS.alice), scopes: ['tools:read', 'tools:call', 'ledger:transfer'] },
  { principal: 'bob', sha256: hashApiKey(KEYS.bob), scopes: ['tools:read', 'tools:call', 'tools:approve'] },
]

const open: FastifyInstance[] = []
afterEach(async () => { await Promise.all(open.splice(0).map(app => app.close())) })

async function gateway (tools: readonly AnyTool[], overrides: ConfigInput = {}): Promise<FastifyInstance> {
  const app = await buildApp({ config: loadConfig({}, { apiKeys: API_KEYS, ...overrides }), tools })
  open.push(app)
  return app
}

const transfer = (amount: number, key: string, headers: Record<string, string> = {}) => ({
  method: 'POST' as const, url: '/tools/ledger_transfer', payload: { from: 'alice', to: 'bob', amount }, headers: { 'x-api-key': KEYS.alice, 'idempotency-key': key, ...headers },
})

/** One call a principal may make a day: the second is refused. */
const once = defineTool({
  id: 'launch', kind: 'write', description: 'Launch, once a day per principal.', effects: ['irreversible'],
  isReadOnly: false, isConcurrencySafe: false, inputSchema: z.object({}), outputSchema: z.object({ ok: z.boolean() }),
  limits: [{ name: 'daily', per: 'principal', description: 'One launch a day', quota: { calls: 1, window: 'day' } }],
  authorize () {}, execute: () => ({ ok: true }),
})

describe('the ledger\'s daily budget, over HTTP', () => {
  it('runs transfers within it, then asks a person; approved, the transfer runs once and is charged', async () => {
    const store = new MemoryLedgerStore({ alice: 100_000, bob: 0 })
    const app = await gateway(createLedgerTools(store, { dailyBudgetCents: 1_000 }))
    const first = await app.inject(transfer(600, 'a'))
    expect(first.statusCode).toBe(200)
    expect(first.headers['ratelimit-policy']).toBe('"ledger_transfer.daily";q=1000;w=86400;qu="amount"')
    expect(first.headers.ratelimit).toMatch(/^"ledger_transfer\.daily";r=400;t=\d+$/)
    // A dry run spends nothing, and says what it would.
    const dry = await app.inject({ ...transfer(500, 'dry'), url: '/tools/ledger_transfer?dryRun=true' })
    expect([dry.statusCode, dry.headers['toolgate-would-spend']]).toEqual([200, '"ledger_transfer.daily";s=500'])
    const asked = await app.inject(transfer(500, 'b'))
    expect(asked.statusCode).toBe(202)
    expect(asked.json()).toMatchObject({ status: 'pending', reasons: ['limit'], limits: ['ledger_transfer.daily'], input: { amount: 500 } })
    expect(await store.balances(['bob'])).toEqual([{ account: 'bob', balance: 600 }])
    const { id } = asked.json<{ id: string }>()
    expect((await app.inject({ method: 'POST', url: `/approvals/${id}/approve`, headers: { 'x-api-key': KEYS.bob } })).statusCode).toBe(200)
    const ran = await app.inject(transfer(500, 'b', { 'approval-id': id }))
    expect([ran.statusCode, ran.headers.ratelimit?.toString().split(';')[1]]).toEqual([200, 'r=0'])
    expect((await app.inject(transfer(500, 'b', { 'approval-id': id }))).headers['idempotent-replayed']).toBe('true')
    expect(await store.balances(['bob'])).toEqual([{ account: 'bob', balance: 1_100 }])
    const limits = await app.inject({ method: 'GET', url: '/limits', headers: { 'x-api-key': KEYS.alice } })
    expect(limits.json()).toEqual({
      limits: [expect.objectContaining({ name: 'ledger_transfer.daily', kind: 'budget', per: 'principal', over: 'approve', max: 1_000, remaining: 0, declaredBy: 'tool', amount: 'input.amount', tools: ['ledger_transfer'] })],
    })
    const metrics = (await app.inject({ method: 'GET', url: '/metrics' })).body
    expect(metrics).toContain('toolgate_limit_refusals_total{limit="ledger_transfer.daily",effects="affects-others,financial,irreversible",action="asked"} 1')
  })
})

describe('a limit that refuses, over HTTP', () => {
  it('answers 429 with Retry-After, the RateLimit fields and the limit in the problem, as the document says', async () => {
    const app = await gateway([once])
    const call = { method: 'POST' as const, url: '/tools/launch', payload: {}, headers: { 'x-api-key': KEYS.alice } }
    expect((await app.inject(call)).statusCode).toBe(200)
    const refused = await app.inject(call)
    expectProblem(refused, 429, 'TOOLGATE_LIMIT_EXCEEDED')
    const retryAfter = Number(refused.headers['retry-after'])
    expect(retryAfter).toBeGreaterThan(0)
    expect(retryAfter).toBeLessThanOrEqual(86_400)
    expect(refused.headers['ratelimit-policy']).toBe('"launch.daily";q=1;w=86400')
    expect(refused.headers.ratelimit).toBe(`"launch.daily";r=0;t=${retryAfter}`)
    expect(refused.json()).toMatchObject({ limit: { name: 'launch.daily', kind: 'quota', per: 'principal', max: 1, remaining: 0, retryAfterSeconds: retryAfter } })
    // Another principal has its own count.
    expect((await app.inject({ ...call, headers: { 'x-api-key': KEYS.bob } })).statusCode).toBe(200)
    const document = (await app.inject({ method: 'GET', url: '/openapi.json', headers: { 'x-api-key': KEYS.alice } })).json()
    const operation = document.paths['/tools/launch'].post
    expect(operation['x-limits']).toEqual([{ name: 'launch.daily', kind: 'quota', per: 'principal', over: 'refuse', window: 'day', declaredBy: 'tool', max: 1, description: 'One launch a day' }])
    expect(Object.keys(operation.responses['429'].headers)).toEqual(['Retry-After', 'RateLimit-Policy', 'RateLimit'])
    expect(operation.responses['429'].description).toContain('`launch.daily`')
    const metrics = (await app.inject({ method: 'GET', url: '/metrics' })).body
    expect(metrics).toContain('toolgate_limit_refusals_total{limit="launch.daily",effects="irreversible",action="refused"} 1')
  })
})

describe('the operator\'s limits in the upstreams file', () => {
  function upstreamsFile (content: unknown): string {
    const dir = mkdtempSync(join(tmpdir(), 'toolgate-limits-'))
    const path = join(dir, 'upstreams.json')
    writeFileSync(path, JSON.stringify(content))
    return path
  }

  it('cover the local tools they match by effect, kept globally with a gauge of what is left', async () => {
    const file = upstreamsFile({ limits: { 'irreversible-global': { effects: ['irreversible'], per: 'global', quota: { calls: 3, window: 'hour' } } } })
    const app = await gateway([once, ...createLedgerTools(new MemoryLedgerStore({ alice: 100, bob: 0 }))], { upstreamsFile: file })
    const launch = await app.inject({ method: 'POST', url: '/tools/launch', payload: {}, headers: { 'x-api-key': KEYS.alice } })
    expect(launch.headers['ratelimit-policy']).toBe('"irreversible-global";q=3;w=3600, "launch.daily";q=1;w=86400')
    const limits = (await app.inject({ method: 'GET', url: '/limits', headers: { 'x-api-key': KEYS.bob } })).json<{ limits: Array<{ name: string, remaining: number, tools: string[] }> }>()
    expect(limits.limits.map(({ name, remaining, tools }) => ({ name, remaining, tools }))).toEqual([
      { name: 'irreversible-global', remaining: 2, tools: ['launch', 'ledger_transfer'] },
      { name: 'launch.daily', remaining: 1, tools: ['launch'] },
    ])
    expect((await app.inject({ method: 'GET', url: '/metrics' })).body).toContain('toolgate_limit_remaining{limit="irreversible-global",kind="quota"} 2')
  })

  it('refuse a replacement of the tools whose input a budget covering them cannot read, and the old tools serve on', async () => {
    const file = upstreamsFile({ limits: { spend: { tools: ['pay*'], per: 'principal', budget: { amount: 'input.amount', max: 100, window: 'day' } } } })
    const declare = (input: z.ZodObject) => defineTool({
      id: 'pay', kind: 'write', description: 'Pay.', isReadOnly: false, isConcurrencySafe: false, inputSchema: input, outputSchema: z.object({ ok: z.boolean() }),
      authorize () {}, execute: () => ({ ok: true }),
    })
    const app = await gateway([declare(z.object({ amount: z.number() }))], { upstreamsFile: file })
    await expect(app.replaceTools([declare(z.object({ cents: z.number() }).strict())])).rejects.toThrow(/limits\.spend\.budget\.amount reads input\.amount, which the tool's input does not have \(tool "pay"/)
    const paid = await app.inject({ method: 'POST', url: '/tools/pay', payload: { amount: 30 }, headers: { 'x-api-key': KEYS.alice } })
    expect([paid.statusCode, paid.headers.ratelimit]).toEqual([200, expect.stringMatching(/^"spend";r=70;t=\d+$/)])
  })

  it('refuse the start naming the limit: an unknown key, an unparsable window, a budget over a field a covered tool lacks', async () => {
    const start = async (limits: unknown): Promise<string> => {
      try {
        await gateway([once], { upstreamsFile: upstreamsFile({ limits }) })
        return 'started'
      } catch (error) {
        return (error as Error).message
      }
    }
    expect(await start({ x: { per: 'principal', quota: { calls: 1, window: 'day' }, colour: 'red' } })).toMatch(/limits\.x: unknown key "colour"/)
    expect(await start({ x: { per: 'principal', quota: { calls: 1, window: 'fortnight' } } })).toMatch(/limits\.x\.quota\.window: minute, hour, day/)
    expect(await start({ x: { tools: ['launch'], per: 'principal', budget: { amount: 'input.amount', max: 5, window: 'day' } } })).toMatch(/limits\.x\.budget\.amount reads input\.amount, which the tool's input does not have \(tool "launch"/)
    expect(await start({ x: { per: 'principal', budget: { amount: 'input.amount +', max: 5, window: 'day' } } })).toMatch(/limits\.x\.budget\.amount/)
    expect(await start({ Bad: { per: 'principal', quota: { calls: 1, window: 'day' } } })).toMatch(/limits\.Bad/)
  })
})
