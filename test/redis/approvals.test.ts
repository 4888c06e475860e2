import { afterAll, afterEach, describe, expect, it } from 'vitest'
import type { FastifyInstance } from 'fastify'
import { Redis } from 'ioredis'
import { buildApp } from '../../plugins/app.js'
import { loadConfig, type ConfigInput } from '../../src/services/config.js'
import { RedisApprovalStore } from '../../src/services/redis/approval-store.js'
import { API_KEYS, approvalTools, call, decide, KEYS } from '../approvals/helpers.js'
import { expectProblem } from '../http/problem-shape.js'
import { cleanPrefix, HAVE_REDIS, REDIS_URL, testPrefix } from './redis-env.js'

const prefixes: string[] = []
const open: FastifyInstance[] = []
afterEach(async () => { await Promise.all(open.splice(0).map(app => app.close())) })
afterAll(async () => { await Promise.all(prefixes.map(cleanPrefix)) })

/** Two gateways (each its own Redis connection and catalog) on one Redis and one key prefix. */
async function replicas (overrides: ConfigInput = {}): Promise<{ a: FastifyInstance, b: FastifyInstance, executions: string[] }> {
  const prefix = testPrefix()
  prefixes.push(prefix)
  const executions: string[] = []
  const tools = approvalTools(executions)
  const config = loadConfig({}, { apiKeys: API_KEYS, redisUrl: REDIS_URL, redisPrefix: prefix, ...overrides })
  const [a, b] = await Promise.all([buildApp({ config, tools }), buildApp({ config, tools })])
  open.push(a!, b!)
  return { a: a!, b: b!, executions }
}

const big = { to: 'mallory', amount: 700 }

describe.skipIf(!HAVE_REDIS)('approvals shared by two gateways on one Redis', () => {
  it('asked on one, listed and approved on the other, run once over concurrent retries on both', async () => {
    const { a, b, executions } = await replicas()
    const asked = await a.inject(call('pay', big, KEYS.alice))
    expect(asked.statusCode).toBe(202)
    const { id } = asked.json()
    const listed = (await b.inject({ method: 'GET', url: '/approvals', headers: { 'x-api-key': KEYS.bob } })).json().approvals
    expect(listed.map((x: { id: string }) => x.id)).toEqual([id])
    expect(listed[0]).toMatchObject({ input: big, effects: ['financial', 'irreversible'], requestedBy: 'alice' })
    expect((await decide(b, id, 'approve', KEYS.bob)).statusCode).toBe(200)
    const responses = await Promise.all(Array.from({ length: 16 }, async (_, i) =>
      await (i % 2 === 0 ? a : b).inject(call('pay', big, KEYS.alice, { 'approval-id': id, 'x-session-id': `s${i}` }))))
    expect(responses.every(r => r.statusCode === 200 || r.statusCode === 409)).toBe(true)
    expect(executions).toEqual(['pay:mallory:700'])
    // Once the first settled, a repeat on either replica replays the same answer.
    const first = responses.find(r => r.statusCode === 200)!.json()
    for (const app of [a, b]) {
      const again = await app.inject(call('pay', big, KEYS.alice, { 'approval-id': id }))
      expect([again.statusCode, again.headers['idempotent-replayed']]).toEqual([200, 'true'])
      expect(again.json()).toEqual(first)
    }
    expect(executions).toHaveLength(1)
    expect((await a.inject({ method: 'GET', url: `/approvals/${id}`, headers: { 'x-api-key': KEYS.alice } })).json()).toMatchObject({ status: 'consumed', decidedBy: 'bob' })
  })

  it('two approvers deciding at once on two replicas: exactly one decision wins', async () => {
    const { a, b } = await replicas()
    const { id } = (await a.inject(call('pay', big, KEYS.alice))).json()
    const [approve, reject] = await Promise.all([decide(a, id, 'approve', KEYS.bob), decide(b, id, 'reject', KEYS.dave, 'no')])
    expect([approve.statusCode, reject.statusCode].sort()).toEqual([200, 409])
    const final = (await b.inject({ method: 'GET', url: `/approvals/${id}`, headers: { 'x-api-key': KEYS.alice } })).json()
    expect(final.status).toBe(approve.statusCode === 200 ? 'approved' : 'rejected')
  })

  it('rejections, mismatches and other principals are refused on either replica', async () => {
    const { a, b, executions } = await replicas()
    const { id } = (await a.inject(call('pay', big, KEYS.alice))).json()
    expectProblem(await b.inject(call('pay', big, KEYS.alice, { 'approval-id': id })), 409, 'TOOLGATE_APPROVAL_PENDING')
    await decide(a, id, 'reject', KEYS.bob, 'too much')
    expect(expectProblem(await b.inject(call('pay', big, KEYS.alice, { 'approval-id': id })), 403, 'TOOLGATE_APPROVAL_REJECTED').note).toBe('too much')
    expectProblem(await b.inject(call('pay', big, KEYS.carol, { 'approval-id': id })), 403, 'TOOLGATE_APPROVAL_NOT_YOURS')
    expectProblem(await b.inject(call('pay', { ...big, amount: 701 }, KEYS.alice, { 'approval-id': id })), 422, 'TOOLGATE_APPROVAL_MISMATCH')
    expect(executions).toEqual([])
  })

  it('the pending bounds hold over both replicas', async () => {
    const { a, b } = await replicas({ approvalMaxPendingPerPrincipal: 2, approvalMaxPending: 3 })
    expect((await a.inject(call('pay', { to: 'x', amount: 101 }, KEYS.alice))).statusCode).toBe(202)
    expect((await b.inject(call('pay', { to: 'x', amount: 102 }, KEYS.alice))).statusCode).toBe(202)
    expectProblem(await a.inject(call('pay', { to: 'x', amount: 103 }, KEYS.alice)), 429, 'TOOLGATE_TOO_MANY_APPROVALS')
    expect((await a.inject(call('pay', { to: 'x', amount: 104 }, KEYS.carol))).statusCode).toBe(202)
    expectProblem(await b.inject(call('pay', { to: 'x', amount: 105 }, KEYS.bob)), 429, 'TOOLGATE_TOO_MANY_APPROVALS')
  })

  it('one principal filling the pending approvals over both replicas leaves the reserve to another', async () => {
    // A share as large as the room: only the reserve (the last eighth, 2 of 16) stops alice.
    const { a, b } = await replicas({ approvalMaxPendingPerPrincipal: 16, approvalMaxPending: 16 })
    for (let i = 0; i < 14; i++) expect((await (i % 2 === 0 ? a : b).inject(call('pay', { to: 'x', amount: 200 + i }, KEYS.alice))).statusCode).toBe(202)
    expectProblem(await a.inject(call('pay', { to: 'x', amount: 300 }, KEYS.alice)), 429, 'TOOLGATE_TOO_MANY_APPROVALS')
    expect((await b.inject(call('pay', { to: 'x', amount: 301 }, KEYS.carol))).statusCode).toBe(202)
    expectProblem(await a.inject(call('pay', { to: 'x', amount: 302 }, KEYS.carol)), 429, 'TOOLGATE_TOO_MANY_APPROVALS')
    expect((await a.inject(call('pay', { to: 'x', amount: 303 }, KEYS.bob))).statusCode).toBe(202)
  })

  it('an expired pending approval is reported by one sweep only, and answers 410', async () => {
    const prefix = testPrefix()
    prefixes.push(prefix)
    const clients = [new Redis(REDIS_URL), new Redis(REDIS_URL)]
    try {
      const [one, two] = clients.map(redis => new RedisApprovalStore(redis, prefix, 60_000))
      const now = Date.now()
      const request = { id: 'f'.repeat(32), tool: 'pay', kind: 'write', effects: [], effectsLabel: 'none', inputDigest: 'd', input: { list: [] }, escalate: false, reasons: ['tool' as const], requestedBy: 'alice', approvers: [], requestedAt: now }
      expect(await one!.create(request, now + 50, { maxPendingPerPrincipal: 5, maxPendingTotal: 5 })).toBe('created')
      expect(await two!.pendingCount()).toBe(1)
      await new Promise(resolve => setTimeout(resolve, 80))
      const swept = await Promise.all([one!.sweepExpired(Date.now()), two!.sweepExpired(Date.now())])
      expect(swept.flat().map(r => [r.id, r.status])).toEqual([[request.id, 'expired']])
      expect(await two!.get(request.id)).toMatchObject({ status: 'expired', input: { list: [] } })
      expect(await one!.decide(request.id, { status: 'approved', decidedBy: 'bob', decidedAt: Date.now(), useBy: Date.now() + 1000 })).toMatchObject({ type: 'not_pending' })
      expect(await one!.pendingCount()).toBe(0)
    } finally {
      for (const redis of clients) redis.disconnect()
    }
  })
})
