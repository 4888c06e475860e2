import { afterEach, describe, expect, it } from 'vitest'
import type { FastifyInstance } from 'fastify'
import { buildApp } from '../../plugins/app.js'
import { loadConfig, type ConfigInput } from '../../src/services/config.js'
import { expectProblem } from '../http/problem-shape.js'
import { API_KEYS, approvalTools, call, decide, KEYS } from './helpers.js'

const open: FastifyInstance[] = []
afterEach(async () => { await Promise.all(open.splice(0).map(app => app.close())) })

async function gateway (overrides: ConfigInput = {}): Promise<{ app: FastifyInstance, executions: string[] }> {
  const executions: string[] = []
  const app = await buildApp({ config: loadConfig({}, { apiKeys: API_KEYS, ...overrides }), tools: approvalTools(executions) })
  open.push(app)
  return { app, executions }
}

const big = { to: 'mallory', amount: 500 }

describe('a call that needs approval, over HTTP with two principals', () => {
  it('answers 202 with the pending approval and Location, and executes nothing', async () => {
    const { app, executions } = await gateway()
    const response = await app.inject(call('pay', big, KEYS.alice))
    expect(response.statusCode).toBe(202)
    const body = response.json()
    expect(body).toMatchObject({ status: 'pending', tool: 'pay', effects: ['financial', 'irreversible'], input: big, requestedBy: 'alice', reasons: ['tool'] })
    expect(body.inputDigest).toMatch(/^[\w-]{43}$/)
    expect(Date.parse(body.expiresAt)).toBeGreaterThan(Date.now())
    expect(response.headers.location).toBe(`/approvals/${body.id}`)
    expect(executions).toEqual([])
    // Below the threshold no approval is asked.
    expect((await app.inject(call('pay', { to: 'x', amount: 5 }, KEYS.alice))).statusCode).toBe(200)
  })

  it('approve, then the retry runs once (execute count 1) and a third call replays the stored answer', async () => {
    const { app, executions } = await gateway()
    const { id } = (await app.inject(call('pay', big, KEYS.alice))).json()
    const approved = await decide(app, id, 'approve', KEYS.bob, 'ok, once')
    expect(approved.statusCode).toBe(200)
    expect(approved.json()).toMatchObject({ id, status: 'approved', decidedBy: 'bob', note: 'ok, once' })
    const first = await app.inject(call('pay', big, KEYS.alice, { 'approval-id': id }))
    expect(first.statusCode).toBe(200)
    expect(first.json()).toMatchObject({ paid: 500, to: 'mallory', n: 1 })
    const again = await app.inject(call('pay', big, KEYS.alice, { 'approval-id': id }))
    expect(again.statusCode).toBe(200)
    expect(again.headers['idempotent-replayed']).toBe('true')
    expect(again.json()).toEqual(first.json())
    expect(executions).toEqual(['pay:mallory:500'])
    expect((await app.inject({ method: 'GET', url: `/approvals/${id}`, headers: { 'x-api-key': KEYS.alice } })).json()).toMatchObject({ status: 'consumed' })
  })

  it('a rejection answers 403 with the approver\'s note, and nothing runs', async () => {
    const { app, executions } = await gateway()
    const { id } = (await app.inject(call('pay', big, KEYS.alice))).json()
    expect((await decide(app, id, 'reject', KEYS.bob, 'not to mallory')).json()).toMatchObject({ status: 'rejected' })
    const body = expectProblem(await app.inject(call('pay', big, KEYS.alice, { 'approval-id': id })), 403, 'TOOLGATE_APPROVAL_REJECTED')
    expect(body).toMatchObject({ note: 'not to mallory', decidedBy: 'bob', approvalId: id })
    expect(executions).toEqual([])
  })

  it('undecided: 409 with Retry-After; expired: 410, and it can no longer be approved', async () => {
    const { app, executions } = await gateway({ approvalTtlMs: 1_000 })
    const { id } = (await app.inject(call('pay', big, KEYS.alice))).json()
    const pending = await app.inject(call('pay', big, KEYS.alice, { 'approval-id': id }))
    expectProblem(pending, 409, 'TOOLGATE_APPROVAL_PENDING')
    expect(pending.headers['retry-after']).toBeDefined()
    await new Promise(resolve => setTimeout(resolve, 1_100))
    expectProblem(await app.inject(call('pay', big, KEYS.alice, { 'approval-id': id })), 410, 'TOOLGATE_APPROVAL_EXPIRED')
    expectProblem(await decide(app, id, 'approve', KEYS.bob), 409, 'TOOLGATE_APPROVAL_DECIDED')
    expect((await app.inject({ method: 'GET', url: `/approvals/${id}`, headers: { 'x-api-key': KEYS.bob } })).json()).toMatchObject({ status: 'expired' })
    expect(executions).toEqual([])
  })

  it('an approved call not used within the approval time expires too', async () => {
    const { app, executions } = await gateway({ approvalTtlMs: 1_000 })
    const { id } = (await app.inject(call('pay', big, KEYS.alice))).json()
    await decide(app, id, 'approve', KEYS.bob)
    await new Promise(resolve => setTimeout(resolve, 1_100))
    expectProblem(await app.inject(call('pay', big, KEYS.alice, { 'approval-id': id })), 410, 'TOOLGATE_APPROVAL_EXPIRED')
    expect(executions).toEqual([])
  })

  it('nobody approves their own request', async () => {
    const { app, executions } = await gateway()
    const { id } = (await app.inject(call('pay', big, KEYS.bob))).json()
    expectProblem(await decide(app, id, 'approve', KEYS.bob), 403, 'TOOLGATE_SELF_APPROVAL')
    expectProblem(await app.inject(call('pay', big, KEYS.bob, { 'approval-id': id })), 409, 'TOOLGATE_APPROVAL_PENDING')
    expect((await decide(app, id, 'approve', KEYS.dave)).statusCode).toBe(200)
    expect((await app.inject(call('pay', big, KEYS.bob, { 'approval-id': id }))).statusCode).toBe(200)
    expect(executions).toEqual(['pay:mallory:500'])
  })

  it('deciding needs the tools:approve scope', async () => {
    const { app } = await gateway()
    const { id } = (await app.inject(call('pay', big, KEYS.alice))).json()
    expectProblem(await decide(app, id, 'approve', KEYS.carol), 403, 'TOOLGATE_FORBIDDEN')
  })

  it('an input changed after approval is 422, and another principal\'s approval id is 403', async () => {
    const { app, executions } = await gateway()
    const { id } = (await app.inject(call('pay', big, KEYS.alice))).json()
    await decide(app, id, 'approve', KEYS.bob)
    expectProblem(await app.inject(call('pay', { ...big, amount: 900 }, KEYS.alice, { 'approval-id': id })), 422, 'TOOLGATE_APPROVAL_MISMATCH')
    expectProblem(await app.inject(call('pay', big, KEYS.carol, { 'approval-id': id })), 403, 'TOOLGATE_APPROVAL_NOT_YOURS')
    expectProblem(await app.inject(call('pay', big, KEYS.alice, { 'approval-id': '0'.repeat(32) })), 404, 'TOOLGATE_APPROVAL_NOT_FOUND')
    expect(executions).toEqual([])
    // Keys in another order are the same input.
    expect((await app.inject(call('pay', { amount: 500, to: 'mallory' }, KEYS.alice, { 'approval-id': id }))).statusCode).toBe(200)
  })

  it('concurrent retries with one approval run it once', async () => {
    const { app, executions } = await gateway()
    const { id } = (await app.inject(call('pay', big, KEYS.alice))).json()
    await decide(app, id, 'approve', KEYS.bob)
    const responses = await Promise.all(Array.from({ length: 20 }, async (_, i) =>
      await app.inject(call('pay', big, KEYS.alice, { 'approval-id': id, 'x-session-id': `s${i}` }))))
    const statuses = responses.map(r => r.statusCode)
    expect(statuses.every(s => s === 200 || s === 409)).toBe(true)
    expect(statuses).toContain(200)
    expect(executions).toEqual(['pay:mallory:500'])
    const ok = responses.filter(r => r.statusCode === 200).map(r => r.json())
    expect(new Set(ok.map(body => JSON.stringify(body))).size).toBe(1)
  })

  it('Prefer: wait=N waits for the decision and answers the final result', async () => {
    const { app, executions } = await gateway()
    const waiting = app.inject(call('pay', big, KEYS.alice, { prefer: 'wait=10' }))
    let pending: Array<{ id: string }> = []
    while (pending.length === 0) {
      await new Promise(resolve => setTimeout(resolve, 50))
      pending = (await app.inject({ method: 'GET', url: '/approvals', headers: { 'x-api-key': KEYS.bob } })).json().approvals
    }
    await decide(app, pending[0]!.id, 'approve', KEYS.bob)
    const response = await waiting
    expect(response.statusCode).toBe(200)
    expect(response.headers['preference-applied']).toBe('wait=10')
    expect(response.json()).toMatchObject({ paid: 500 })
    expect(executions).toEqual(['pay:mallory:500'])
    // The approval is used: a repeat with its id replays, never runs again.
    const repeat = await app.inject(call('pay', big, KEYS.alice, { 'approval-id': pending[0]!.id }))
    expect(repeat.headers['idempotent-replayed']).toBe('true')
    expect(executions).toHaveLength(1)
  })

  it('Prefer: wait=N that runs out answers 202; a rejection while waiting answers 403', async () => {
    const { app, executions } = await gateway()
    const timedOut = await app.inject(call('pay', big, KEYS.alice, { prefer: 'wait=1' }))
    expect(timedOut.statusCode).toBe(202)
    expect(timedOut.headers['preference-applied']).toBe('wait=1')
    const waiting = app.inject(call('pay', { to: 'eve', amount: 300 }, KEYS.carol, { prefer: 'wait=10' }))
    let mine: Array<{ id: string }> = []
    while (mine.length === 0) {
      await new Promise(resolve => setTimeout(resolve, 50))
      mine = (await app.inject({ method: 'GET', url: '/approvals', headers: { 'x-api-key': KEYS.carol } })).json().approvals
    }
    await decide(app, mine[0]!.id, 'reject', KEYS.bob, 'no')
    expectProblem(await waiting, 403, 'TOOLGATE_APPROVAL_REJECTED')
    expect(executions).toEqual([])
  })

  it('Approval-Id with Prefer: wait=N on an undecided approval waits for the decision, then runs once', async () => {
    const { app, executions } = await gateway()
    const { id } = (await app.inject(call('pay', big, KEYS.alice))).json()
    expectProblem(await app.inject(call('pay', big, KEYS.alice, { 'approval-id': id, prefer: 'wait=1' })), 409, 'TOOLGATE_APPROVAL_PENDING')
    const waiting = app.inject(call('pay', big, KEYS.alice, { 'approval-id': id, prefer: 'wait=10' }))
    await new Promise(resolve => setTimeout(resolve, 100))
    await decide(app, id, 'approve', KEYS.bob)
    const response = await waiting
    expect([response.statusCode, response.headers['preference-applied']]).toEqual([200, 'wait=10'])
    expect(executions).toEqual(['pay:mallory:500'])
  })

  it('every escalation needs an approval, bound to escalating', async () => {
    const { app, executions } = await gateway()
    const asked = await app.inject(call('sudo', {}, KEYS.alice, {}, '?escalate=true'))
    expect(asked.statusCode).toBe(202)
    expect(asked.json()).toMatchObject({ escalate: true, reasons: ['escalation'] })
    const { id } = asked.json()
    await decide(app, id, 'approve', KEYS.bob)
    expectProblem(await app.inject(call('sudo', {}, KEYS.alice, { 'approval-id': id })), 422, 'TOOLGATE_APPROVAL_MISMATCH')
    const ran = await app.inject(call('sudo', {}, KEYS.alice, { 'approval-id': id }, '?escalate=true'))
    expect(ran.json()).toEqual({ escalated: true })
    expect(executions).toEqual(['sudo:true'])
    // Without escalation, no approval is needed.
    expect((await app.inject(call('sudo', {}, KEYS.alice))).json()).toEqual({ escalated: false })
  })

  it('pending approvals are bounded per principal: one caller cannot take every slot', async () => {
    const { app } = await gateway({ approvalMaxPendingPerPrincipal: 2, approvalMaxPending: 3 })
    for (const amount of [101, 102]) expect((await app.inject(call('pay', { to: 'x', amount }, KEYS.alice))).statusCode).toBe(202)
    const refused = await app.inject(call('pay', { to: 'x', amount: 103 }, KEYS.alice))
    expectProblem(refused, 429, 'TOOLGATE_TOO_MANY_APPROVALS')
    expect(refused.headers['retry-after']).toBeDefined()
    expect((await app.inject(call('pay', { to: 'x', amount: 104 }, KEYS.carol))).statusCode).toBe(202)
    expectProblem(await app.inject(call('pay', { to: 'x', amount: 105 }, KEYS.bob)), 429, 'TOOLGATE_TOO_MANY_APPROVALS')
  })

  it('operator rules by tool glob and principal, with their own approvers', async () => {
    const { app, executions } = await gateway({ approvalRules: [{ tools: ['ec*'], principal: 'carol', approvers: ['dave'] }] })
    expect((await app.inject(call('echo', { text: 'a' }, KEYS.alice))).statusCode).toBe(200)
    const asked = await app.inject(call('echo', { text: 'b' }, KEYS.carol))
    expect(asked.statusCode).toBe(202)
    expect(asked.json()).toMatchObject({ reasons: ['rule'], approvers: ['dave'] })
    expectProblem(await decide(app, asked.json().id, 'approve', KEYS.bob), 403, 'TOOLGATE_FORBIDDEN')
    expect((await decide(app, asked.json().id, 'approve', KEYS.dave)).statusCode).toBe(200)
    expect((await app.inject(call('echo', { text: 'b' }, KEYS.carol, { 'approval-id': asked.json().id }))).json()).toEqual({ text: 'b' })
    expect(executions).toEqual(['echo:a', 'echo:b'])
  })

  it('who sees what: approvers see every pending approval, requesters their own, others nothing', async () => {
    const { app } = await gateway()
    const { id } = (await app.inject(call('pay', big, KEYS.alice))).json()
    const list = async (key: string): Promise<string[]> => (await app.inject({ method: 'GET', url: '/approvals', headers: { 'x-api-key': key } })).json().approvals.map((a: { id: string }) => a.id)
    expect(await list(KEYS.bob)).toEqual([id])
    expect(await list(KEYS.alice)).toEqual([id])
    expect(await list(KEYS.carol)).toEqual([])
    expectProblem(await app.inject({ method: 'GET', url: `/approvals/${id}`, headers: { 'x-api-key': KEYS.carol } }), 404, 'TOOLGATE_APPROVAL_NOT_FOUND')
    expectProblem(await app.inject({ method: 'GET', url: '/approvals' }), 401, 'TOOLGATE_UNAUTHENTICATED')
  })

  it('a decision from another site is refused (Origin, Sec-Fetch-Site, form bodies)', async () => {
    const { app } = await gateway()
    const { id } = (await app.inject(call('pay', big, KEYS.alice))).json()
    const post = (headers: Record<string, string>, payload?: string) => app.inject({ method: 'POST', url: `/approvals/${id}/approve`, headers: { 'x-api-key': KEYS.bob, ...headers }, payload })
    expectProblem(await post({ origin: 'https://evil.example' }), 403, 'TOOLGATE_FORBIDDEN')
    expectProblem(await post({ 'sec-fetch-site': 'cross-site' }), 403, 'TOOLGATE_FORBIDDEN')
    expectProblem(await post({ 'content-type': 'application/x-www-form-urlencoded' }, 'note=x'), 415)
    expectProblem(await post({ 'content-type': 'text/plain' }, '{"note":"x"}'), 415)
    expect((await post({ origin: 'http://localhost:80', host: 'localhost:80' })).statusCode).toBe(200)
  })
})

describe('a call that needs approval, sent with an Idempotency-Key', () => {
  it('asks once however often it is re-sent; once approved, the same key runs it once (with or without Approval-Id)', async () => {
    const { app, executions } = await gateway()
    const key = { 'idempotency-key': 'order-42' }
    const first = (await app.inject(call('pay', big, KEYS.alice, key))).json()
    const again = await app.inject(call('pay', big, KEYS.alice, key))
    expect([again.statusCode, again.json().id]).toEqual([202, first.id])
    expect((await app.inject({ method: 'GET', url: '/approvals', headers: { 'x-api-key': KEYS.bob } })).json().approvals).toHaveLength(1)
    expectProblem(await app.inject(call('pay', { ...big, amount: 501 }, KEYS.alice, key)), 422, 'TOOLGATE_IDEMPOTENCY_MISMATCH')
    // Another principal's same key is another call: its own approval.
    expect((await app.inject(call('pay', big, KEYS.carol, key))).json().id).not.toBe(first.id)
    await decide(app, first.id, 'approve', KEYS.bob)
    const ran = await app.inject(call('pay', big, KEYS.alice, key))
    expect([ran.statusCode, ran.json().paid]).toEqual([200, 500])
    const withId = await app.inject(call('pay', big, KEYS.alice, { ...key, 'approval-id': first.id }))
    expect([withId.statusCode, withId.headers['idempotent-replayed']]).toEqual([200, 'true'])
    expect(executions).toEqual(['pay:mallory:500'])
  })

  it('a rejected keyed call stays rejected for that key', async () => {
    const { app, executions } = await gateway()
    const key = { 'idempotency-key': 'order-43' }
    const { id } = (await app.inject(call('pay', big, KEYS.alice, key))).json()
    await decide(app, id, 'reject', KEYS.bob, 'no')
    expectProblem(await app.inject(call('pay', big, KEYS.alice, key)), 403, 'TOOLGATE_APPROVAL_REJECTED')
    expect(executions).toEqual([])
  })
})

it('an in-memory gateway says, when it stops, how many pending approvals it loses', async () => {
  const lines: Array<Record<string, unknown>> = []
  const { Writable } = await import('node:stream')
  const stream = new Writable({ write (chunk, _encoding, done) { lines.push(JSON.parse(String(chunk)) as Record<string, unknown>); done() } })
  const app = await buildApp({ config: loadConfig({}, { apiKeys: API_KEYS }), tools: approvalTools([]), logger: { level: 'info', stream } })
  await app.inject(call('pay', big, KEYS.alice))
  await app.close()
  expect(lines.find(line => line.pendingApprovals !== undefined)).toMatchObject({ level: 40, pendingApprovals: 1 })
})
