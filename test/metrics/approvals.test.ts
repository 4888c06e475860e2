import { afterEach, expect, it } from 'vitest'
import type { FastifyInstance } from 'fastify'
import { Writable } from 'node:stream'
import { buildApp } from '../../plugins/app.js'
import { loadConfig } from '../../src/services/config.js'
import { API_KEYS, approvalTools, call, decide, KEYS } from '../approvals/helpers.js'
import { sample, scrape } from './scrape.js'

const open: FastifyInstance[] = []
afterEach(async () => { await Promise.all(open.splice(0).map(app => app.close())) })

const pay = { tool: 'pay', kind: 'write', effects: 'financial,irreversible' }

it('counts approvals requested and decided (approved, rejected, expired) per tool, the pending gauge, and logs each step', async () => {
  const lines: Array<Record<string, unknown>> = []
  const stream = new Writable({ write (chunk, _encoding, done) { lines.push(JSON.parse(String(chunk)) as Record<string, unknown>); done() } })
  const app = await buildApp({ config: loadConfig({}, { apiKeys: API_KEYS, approvalTtlMs: 1_000 }), tools: approvalTools([]), logger: { level: 'info', stream } })
  open.push(app)
  const before = await scrape(app)
  expect(sample(before, 'toolgate_approvals_requested_total', pay)).toBe(0)
  for (const decision of ['approved', 'rejected', 'expired']) expect(sample(before, 'toolgate_approvals_decided_total', { ...pay, decision })).toBe(0)
  expect(sample(before, 'toolgate_approvals_pending')).toBe(0)

  const ids: string[] = []
  for (const amount of [201, 202, 203]) ids.push((await app.inject(call('pay', { to: 'x', amount }, KEYS.alice))).json().id)
  await new Promise(resolve => setTimeout(resolve, 20))
  expect(sample(await scrape(app), 'toolgate_approvals_pending')).toBe(3)
  await decide(app, ids[0]!, 'approve', KEYS.bob)
  await decide(app, ids[1]!, 'reject', KEYS.bob, 'no')
  expect((await app.inject(call('pay', { to: 'x', amount: 201 }, KEYS.alice, { 'approval-id': ids[0]! }))).statusCode).toBe(200)
  await new Promise(resolve => setTimeout(resolve, 1_100))
  await app.inject({ method: 'GET', url: '/approvals', headers: { 'x-api-key': KEYS.bob } }) // sweeps the expired one
  await new Promise(resolve => setTimeout(resolve, 20))

  const after = await scrape(app)
  expect(sample(after, 'toolgate_approvals_requested_total', pay)).toBe(3)
  expect(sample(after, 'toolgate_approvals_decided_total', { ...pay, decision: 'approved' })).toBe(1)
  expect(sample(after, 'toolgate_approvals_decided_total', { ...pay, decision: 'rejected' })).toBe(1)
  expect(sample(after, 'toolgate_approvals_decided_total', { ...pay, decision: 'expired' })).toBe(1)
  expect(sample(after, 'toolgate_approvals_pending')).toBe(0)
  expect(sample(after, 'toolgate_tool_calls_total', { ...pay, outcome: 'approval_pending' })).toBe(3)
  // Labels are a closed set: principals, ids and inputs never become series.
  expect(after.text).not.toMatch(/alice|bob|mallory/)

  const steps = lines.filter(line => typeof line.approvalId === 'string')
  const requested = steps.find(line => line.msg === 'approval requested' && line.approvalId === ids[0])
  expect(requested).toMatchObject({ tool: 'pay', requestedBy: 'alice', inputDigest: expect.any(String) })
  expect(requested).not.toHaveProperty('input')
  expect(steps.find(line => line.msg === 'approval decided' && line.approvalId === ids[0])).toMatchObject({ decision: 'approved', decidedBy: 'bob', requestedBy: 'alice', inputDigest: requested!.inputDigest })
  expect(steps.find(line => line.msg === 'approved call executed')).toMatchObject({ approvalId: ids[0], approvedBy: 'bob', executedBy: 'alice', ok: true })
  expect(steps.find(line => line.msg === 'approval expired')).toMatchObject({ approvalId: ids[2] })
})
