import type { InjectOptions } from 'fastify'
import { describe, expect, it } from 'vitest'
import { OUTCOMES } from '../../src/index.js'
import { httpTools } from '../fixtures/http-tools.js'
import { payTool } from '../fixtures/metrics-tools.js'
import { auth, KEYS, testApp } from '../http/helpers.js'
import { sample, scrape, type Scrape } from './scrape.js'

const tools = [...httpTools, payTool]
const json = (url: string, payload: object, key: string | null = KEYS.admin): InjectOptions =>
  ({ method: 'POST', url, headers: key === null ? {} : auth(key), payload })

/** Calls of one tool by outcome, over every outcome. */
function callsOf (s: Scrape, tool: string, kind: string, effects: string): Record<string, number> {
  return Object.fromEntries(OUTCOMES.map(outcome => [outcome, sample(s, 'toolgate_tool_calls_total', { tool, kind, effects, outcome }) ?? 0]).filter(([, n]) => n !== 0))
}

const CASES: Array<[outcome: string, status: number, tool: string, kind: string, effects: string, request: InjectOptions]> = [
  ['ok', 200, 'echo', 'read', 'none', json('/tools/echo', { text: 'hi' })],
  ['ok', 200, 'pay', 'write', 'affects-others,financial,irreversible', json('/tools/pay', { amount: 5 })],
  ['dry_run', 200, 'escalatable', 'write', 'none', json('/tools/escalatable?dryRun=true', {})],
  ['invalid_input', 400, 'echo', 'read', 'none', json('/tools/echo', { text: '' })],
  ['invalid_input', 415, 'echo', 'read', 'none', { method: 'POST', url: '/tools/echo', headers: { ...auth(KEYS.admin), 'content-type': 'text/plain' }, payload: 'hi' }],
  ['unauthenticated', 401, 'echo', 'read', 'none', json('/tools/echo', { text: 'hi' }, null)],
  ['unauthenticated', 401, 'pay', 'write', 'affects-others,financial,irreversible', json('/tools/pay', { amount: 5 }, 'not-a-key')],
  ['forbidden', 403, 'echo', 'read', 'none', json('/tools/echo', { text: 'hi' }, KEYS.reader)],
  ['forbidden', 403, 'guarded', 'write', 'none', json('/tools/guarded', { deny: true })],
  ['not_found', 404, 'admin_only', 'read', 'none', json('/tools/admin_only', {}, KEYS.caller)],
  ['tool_error', 409, 'pay', 'write', 'affects-others,financial,irreversible', json('/tools/pay', { amount: 500 })],
  ['tool_failed', 500, 'crash', 'write', 'none', json('/tools/crash', {})],
  ['bad_definition', 500, 'bad_authorize', 'read', 'none', json('/tools/bad_authorize', {})],
  ['invalid_output', 502, 'bad_output', 'read', 'none', json('/tools/bad_output', {})],
  // A non-read-only tool that timed out after it began: its effect is unknown.
  ['unknown', 504, 'hang', 'write', 'none', json('/tools/hang', {})],
]

describe('each call is counted once, under its outcome and its tool\'s effects', () => {
  it.each(CASES)('%s: a %i from %s', async (outcome, status, tool, kind, effects, request) => {
    const app = await testApp({}, tools)
    expect((await app.inject(request)).statusCode).toBe(status)
    const s = await scrape(app)
    expect(callsOf(s, tool, kind, effects)).toEqual({ [outcome]: 1 })
    expect(sample(s, 'toolgate_tool_duration_seconds_count', { tool, kind, effects, outcome })).toBe(1)
    expect(sample(s, 'toolgate_tool_duration_seconds_sum', { tool, kind, effects, outcome })).toBeGreaterThan(0)
  })

  it('calls add up per outcome: three ok and two tool errors of a financial tool', async () => {
    const app = await testApp({}, tools)
    for (const amount of [1, 200, 2, 300, 3]) await app.inject(json('/tools/pay', { amount }))
    const s = await scrape(app)
    expect(callsOf(s, 'pay', 'write', 'affects-others,financial,irreversible')).toEqual({ ok: 3, tool_error: 2 })
  })
})

describe('idempotent replays', () => {
  it('a repeat with the same idempotency key counts as outcome replayed and as a replay', async () => {
    const app = await testApp({}, tools)
    const request = { ...json('/tools/pay', { amount: 7 }), headers: { ...auth(KEYS.admin), 'idempotency-key': 'metrics-replay-1' } }
    expect((await app.inject(request)).statusCode).toBe(200)
    expect((await app.inject(request)).headers['idempotent-replayed']).toBe('true')
    const s = await scrape(app)
    expect(callsOf(s, 'pay', 'write', 'affects-others,financial,irreversible')).toEqual({ ok: 1, replayed: 1 })
    expect(sample(s, 'toolgate_idempotent_replays_total', { tool: 'pay', kind: 'write', effects: 'affects-others,financial,irreversible' })).toBe(1)
  })
})

describe('authentication failures, by bounded reason', () => {
  it('a missing credential and a wrong key count under missing and invalid_key', async () => {
    const app = await testApp({}, tools)
    await app.inject(json('/tools/echo', { text: 'a' }, null))
    await app.inject(json('/tools/echo', { text: 'a' }, 'wrong-key-1'))
    await app.inject(json('/tools/echo', { text: 'a' }, 'wrong-key-2'))
    const s = await scrape(app)
    expect(sample(s, 'toolgate_auth_failures_total', { reason: 'missing' })).toBe(1)
    expect(sample(s, 'toolgate_auth_failures_total', { reason: 'invalid_key' })).toBe(2)
  })
})
