import { describe, expect, it } from 'vitest'
import { z } from 'zod'
import { defineTool } from '../../src/core/define-tool.js'
import { ToolError } from '../../src/core/errors.js'
import { Limits } from '../../src/core/limits/limits.js'
import { reportOf } from '../../src/core/limits/report.js'
import { compileLimit } from '../../src/core/limits/limit.js'
import { catalogOf, lastRecord, rejectionOf, writeDeclaration } from './helpers.js'

/** A payment tool: spends `input.amount` of a budget of 100 a day per principal. */
function pay (overrides: Record<string, unknown> = {}, counts = { execute: 0 }) {
  return writeDeclaration('pay', (input: { amount: number }) => { counts.execute++; return { paid: input.amount } }, {
    inputSchema: z.object({ amount: z.number() }).strict(),
    outputSchema: z.object({ paid: z.number() }),
    limits: [{ name: 'daily', per: 'principal', budget: { amount: 'input.amount', max: 100, window: 'day' } }],
    ...overrides,
  })
}

describe('a budget a tool declares', () => {
  it('runs calls while they fit and refuses the one that does not, with 429, Retry-After and what is left', async () => {
    const counts = { execute: 0 }
    const agent = catalogOf([pay({}, counts)]).bind({ app: undefined, requester: 'agent' })
    await agent.invoke({ toolId: 'pay', input: { amount: 60 } })
    const second = await agent.invoke({ toolId: 'pay', input: { amount: 40 } })
    expect(reportOf(second.limits![0]!)).toMatchObject({ spends: 40, remaining: 0 })
    const refused = await rejectionOf(agent.invoke({ toolId: 'pay', input: { amount: 0.01 } }))
    expect(refused.code).toBe('TOOLGATE_LIMIT_EXCEEDED')
    expect(refused.extensions).toMatchObject({ limit: { name: 'pay.daily', kind: 'budget', max: 100, remaining: 0, spends: 0.01 } })
    expect(refused.extensions.retryAfter).toBeGreaterThan(0)
    expect([counts.execute, lastRecord()?.limit, lastRecord()?.limitAction, lastRecord()?.outcome]).toEqual([2, 'pay.daily', 'refused', 'rate_limited'])
  })

  it('keeps each principal\'s budget apart', async () => {
    const catalog = catalogOf([pay()])
    await catalog.bind({ app: undefined, requester: 'a' }).invoke({ toolId: 'pay', input: { amount: 100 } })
    await expect(catalog.bind({ app: undefined, requester: 'b' }).invoke({ toolId: 'pay', input: { amount: 100 } })).resolves.toMatchObject({ value: { paid: 100 } })
  })

  it('refuses a call larger than the whole window with 422, and an amount it cannot read with 400, charging nothing', async () => {
    const agent = catalogOf([pay()]).bind({ app: undefined, requester: 'agent' })
    expect((await rejectionOf(agent.invoke({ toolId: 'pay', input: { amount: 101 } }))).code).toBe('TOOLGATE_LIMIT_TOO_LARGE')
    expect((await rejectionOf(agent.invoke({ toolId: 'pay', input: { amount: 1e308 } }))).code).toBe('TOOLGATE_LIMIT_TOO_LARGE')
    const negative = await rejectionOf(agent.invoke({ toolId: 'pay', input: { amount: -5 } }))
    expect([negative.code, negative.status]).toEqual(['TOOLGATE_LIMIT_AMOUNT_INVALID', 400])
    expect(negative.message).toMatch(/pay\.daily.*below zero/)
    expect((await agent.invoke({ toolId: 'pay', input: { amount: 100 } })).value).toEqual({ paid: 100 })
  })

  it('charges nothing for a call refused earlier (validation, authorize, plan mode) nor for a dry run, which reports what it would spend', async () => {
    const deny = { authorize: (input: { amount: number }) => { if (input.amount === 13) throw new ToolError(403, 'UNLUCKY', 'no') } }
    const catalog = catalogOf([pay({ ...deny, resolve: (input: unknown) => input })])
    const agent = catalog.bind({ app: undefined, requester: 'agent' })
    await rejectionOf(agent.invoke({ toolId: 'pay', input: { amount: 'x' } }))
    await rejectionOf(agent.invoke({ toolId: 'pay', input: { amount: 13 } }))
    await rejectionOf(catalog.bind({ app: undefined, requester: 'agent', mode: 'plan' }).invoke({ toolId: 'pay', input: { amount: 50 } }))
    const dry = await agent.invoke({ toolId: 'pay', input: { amount: 70 }, dryRun: true })
    expect(reportOf(dry.limits![0]!)).toMatchObject({ spends: 70, remaining: 30 })
    expect((await agent.invoke({ toolId: 'pay', input: { amount: 100 } })).value).toEqual({ paid: 100 })
  })

  it('charges a replayed idempotent call nothing more', async () => {
    const counts = { execute: 0 }
    const agent = catalogOf([pay({}, counts)]).bind({ app: undefined, requester: 'agent' })
    for (let i = 0; i < 3; i++) await agent.invoke({ toolId: 'pay', input: { amount: 60 }, idempotencyKey: 'k' })
    expect((await agent.invoke({ toolId: 'pay', input: { amount: 40 } })).value).toEqual({ paid: 40 })
    expect(counts.execute).toBe(2)
  })

  it('keeps the charge of a call that failed while running, and refunds one that never began', async () => {
    let fail = true
    const flaky = pay({ execute: (input: { amount: number }) => { if (fail) throw new ToolError(502, 'UPSTREAM_DOWN', 'down'); return { paid: input.amount } } })
    let release!: () => void
    const block = writeDeclaration('block', async () => { await new Promise<void>(resolve => { release = resolve }) })
    const agent = catalogOf([flaky, block], { core: { maxQueuePerDomain: 0 } }).bind({ app: undefined, requester: 'agent', domain: 'd' })
    await rejectionOf(agent.invoke({ toolId: 'pay', input: { amount: 30 } }))
    const blocking = agent.invoke({ toolId: 'block', input: {} })
    expect((await rejectionOf(agent.invoke({ toolId: 'pay', input: { amount: 70 } }))).code).toBe('TOOLGATE_QUEUE_FULL')
    release()
    await blocking
    fail = false
    await agent.invoke({ toolId: 'pay', input: { amount: 70 } })
    expect((await rejectionOf(agent.invoke({ toolId: 'pay', input: { amount: 1 } }))).code).toBe('TOOLGATE_LIMIT_EXCEEDED')
  })
})

describe('a limit where a person decides', () => {
  const asking = () => pay({ limits: [{ name: 'daily', per: 'principal', over: 'approve', budget: { amount: 'input.amount', max: 100, window: 'day' } }] })

  it('turns the call past it into an approval naming the limit; approved, it runs once and is charged then', async () => {
    const counts = { execute: 0 }
    const catalog = catalogOf([pay({ limits: [{ name: 'daily', per: 'principal', over: 'approve', budget: { amount: 'input.amount', max: 100, window: 'day' } }] }, counts)])
    const agent = catalog.bind({ app: undefined, requester: 'agent' })
    await agent.invoke({ toolId: 'pay', input: { amount: 90 } })
    const asked = await agent.invoke({ toolId: 'pay', input: { amount: 20 } })
    expect(asked.approval).toMatchObject({ status: 'pending', reasons: ['limit'], limits: ['pay.daily'] })
    expect([lastRecord()?.limit, lastRecord()?.limitAction, counts.execute]).toEqual(['pay.daily', 'asked', 1])
    await catalog.approvals.decide(asked.approval!.id, { id: 'cfo' }, 'approved')
    const ran = await agent.invoke({ toolId: 'pay', input: { amount: 20 }, approvalId: asked.approval!.id })
    expect([ran.value, ran.limits?.[0]?.state.remaining]).toEqual([{ paid: 20 }, 0])
    expect((await agent.invoke({ toolId: 'pay', input: { amount: 20 }, approvalId: asked.approval!.id })).replayed).toBe(true)
    expect(counts.execute).toBe(2)
    // Past the count now, the next call asks again.
    expect((await agent.invoke({ toolId: 'pay', input: { amount: 1 } })).approval).toBeDefined()
  })

  it('a rejected approval spends nothing, and a re-sent keyed call finds the approval it opened', async () => {
    const catalog = catalogOf([asking()])
    const agent = catalog.bind({ app: undefined, requester: 'agent' })
    await agent.invoke({ toolId: 'pay', input: { amount: 100 } })
    const first = await agent.invoke({ toolId: 'pay', input: { amount: 5 }, idempotencyKey: 'k' })
    const again = await agent.invoke({ toolId: 'pay', input: { amount: 5 }, idempotencyKey: 'k' })
    expect(again.approval?.id).toBe(first.approval?.id)
    await catalog.approvals.decide(first.approval!.id, { id: 'cfo' }, 'approved')
    expect((await agent.invoke({ toolId: 'pay', input: { amount: 5 }, idempotencyKey: 'k' })).value).toEqual({ paid: 5 })
    const other = await agent.invoke({ toolId: 'pay', input: { amount: 6 } })
    await catalog.approvals.decide(other.approval!.id, { id: 'cfo' }, 'rejected')
    expect((await rejectionOf(agent.invoke({ toolId: 'pay', input: { amount: 6 }, approvalId: other.approval!.id }))).code).toBe('TOOLGATE_APPROVAL_REJECTED')
  })
})

describe('rates, quotas and the operator\'s limits', () => {
  it('a rate lets its burst through at once and refuses the next until an interval passes', async () => {
    let now = Date.UTC(2026, 0, 1)
    const rated = writeDeclaration('act', () => 'ok', { limits: [{ name: 'burst', per: 'global', rate: { calls: 6, window: '1m', burst: 2 } }] })
    const agent = catalogOf([rated], { limits: { now: () => now } }).bind({ app: undefined, requester: 'agent' })
    await agent.invoke({ toolId: 'act', input: {} })
    await agent.invoke({ toolId: 'act', input: {} })
    const refused = await rejectionOf(agent.invoke({ toolId: 'act', input: {} }))
    expect([refused.code, refused.extensions.retryAfter]).toEqual(['TOOLGATE_LIMIT_EXCEEDED', 10])
    now += 10_000
    expect((await agent.invoke({ toolId: 'act', input: {} })).value).toBe('ok')
  })

  it('a rate that does not divide its window evenly still takes its whole burst at once, at any instant', async () => {
    for (const [calls, burst] of [[7, 1], [3, 3], [12, 1], [97, 50]] as const) {
      let now = Date.UTC(2026, 11, 4, 12) + calls * 7_919
      const rated = writeDeclaration('act', () => 'ok', { limits: [{ name: 'r', per: 'global', rate: { calls, window: '1s', burst } }] })
      const agent = catalogOf([rated], { limits: { now: () => now } }).bind({ app: undefined, requester: 'agent' })
      for (let i = 0; i < burst; i++) expect((await agent.invoke({ toolId: 'act', input: {} })).value).toBe('ok')
      expect((await rejectionOf(agent.invoke({ toolId: 'act', input: {} }))).code).toBe('TOOLGATE_LIMIT_EXCEEDED')
      now += 1_000
      expect((await agent.invoke({ toolId: 'act', input: {} })).value).toBe('ok')
    }
  })

  it('an operator limit by effect covers every tool declaring it, beside the tool\'s own', async () => {
    const irreversible = compileLimit('irreversible-hourly', { per: 'principal', over: 'refuse', quota: { calls: 1, window: 'hour' } }, 'operator')
    const limits = { operator: (tool: { effects: readonly string[] }) => tool.effects.includes('irreversible') ? [irreversible] : [] }
    const drop = writeDeclaration('drop', () => 'dropped', { effects: ['irreversible'] })
    const read = writeDeclaration('read', () => 'read')
    const catalog = catalogOf([drop, read, pay()], { limits: limits as never })
    const agent = catalog.bind({ app: undefined, requester: 'agent' })
    expect(catalog.limits.of(catalog.get('drop')!).map(limit => limit.name)).toEqual(['irreversible-hourly'])
    expect(catalog.limits.of(catalog.get('pay')!).map(limit => limit.name)).toEqual(['pay.daily'])
    await agent.invoke({ toolId: 'drop', input: {} })
    expect((await rejectionOf(agent.invoke({ toolId: 'drop', input: {} }))).extensions).toMatchObject({ limit: { name: 'irreversible-hourly', kind: 'quota', per: 'principal' } })
    expect((await agent.invoke({ toolId: 'read', input: {} })).limits).toBeUndefined()
  })

  it('shows a caller where they stand, charging nothing', async () => {
    const catalog = catalogOf([pay()])
    const agent = catalog.bind({ app: undefined, requester: 'agent' })
    await agent.invoke({ toolId: 'pay', input: { amount: 25 } })
    const limits = new Limits()
    expect(await limits.standing([], { principal: 'agent', session: 'agent' })).toEqual([])
    const [use] = await catalog.limits.standing(catalog.limits.of(catalog.get('pay')!), { principal: 'agent', session: 'agent' })
    expect(reportOf(use!)).toMatchObject({ name: 'pay.daily', remaining: 75, max: 100, spends: 0 })
  })
})

describe('a limit declaration', () => {
  const declare = (limits: unknown) => () => defineTool(pay({ limits }) as never)

  it('names the field of a bad one: unknown field, unparsable window, two kinds, a budget over a field the input lacks', () => {
    expect(declare([{ name: 'x', per: 'principal', quota: { calls: 1, window: 'day' }, colour: 'red' }])).toThrow(/limits\.0.*unknown key "colour"/)
    expect(declare([{ name: 'x', per: 'principal', quota: { calls: 1, window: 'fortnight' } }])).toThrow(/limits\.0\.quota\.window/)
    expect(declare([{ name: 'x', per: 'principal', quota: { calls: 1, window: 'day' }, rate: { calls: 1, window: '1h' } }])).toThrow(/one kind per limit/)
    expect(declare([{ name: 'x', per: 'principal', budget: { amount: 'input.amout', max: 5, window: 'day' } }])).toThrow(/limits\.0\.budget\.amount.*input\.amout/)
    expect(declare([{ name: 'x', per: 'team', quota: { calls: 1, window: 'day' } }])).toThrow(/limits\.0\.per/)
  })
})
