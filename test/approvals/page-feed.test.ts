import type { FastifyInstance } from 'fastify'
import { afterEach, describe, expect, it } from 'vitest'
import { buildApp } from '../../plugins/app.js'
import { loadConfig, type ConfigInput } from '../../src/services/config.js'
import { expectProblem } from '../http/problem-shape.js'
import { API_KEYS, approvalTools, call, decide, KEYS } from './helpers.js'

/* The approvals page's shell and its feed, without a browser (test/browser/ has the page at work). */

const open: FastifyInstance[] = []
afterEach(async () => { await Promise.all(open.splice(0).map(app => app.close())) })

async function gateway (overrides: ConfigInput = {}): Promise<FastifyInstance> {
  const app = await buildApp({ config: loadConfig({}, { apiKeys: API_KEYS, ...overrides }), tools: approvalTools([]) })
  open.push(app)
  return app
}

const feed = async (app: FastifyInstance, key: string, headers: Record<string, string> = {}) =>
  await app.inject({ method: 'GET', url: '/approvals/ui/feed', headers: { 'x-api-key': key, ...headers } })

describe('the approvals page and its feed', () => {
  it('the page needs no credential and holds no data; it forbids framing, foreign scripts and external assets', async () => {
    const app = await gateway()
    const { id } = (await app.inject(call('pay', { to: 'mallory', amount: 700 }, KEYS.alice))).json()
    const page = await app.inject({ method: 'GET', url: '/approvals/ui' })
    expect(page.statusCode).toBe(200)
    expect(page.headers['content-type']).toMatch(/^text\/html/)
    expect(page.body).not.toContain(id)
    expect(page.body).not.toContain('mallory')
    const csp = String(page.headers['content-security-policy'])
    expect(csp).toMatch(/^default-src 'none'; script-src 'nonce-[^']+'; style-src 'nonce-[^']+'; connect-src 'self'; form-action 'none'; frame-ancestors 'none'; base-uri 'none'$/)
    expect(page.headers['x-frame-options']).toBe('DENY')
    expect(page.body).not.toMatch(/(?:src|href)="(?:https?:)?\/\//) // no external asset
    expect(page.body).toContain('aria-live="polite"')
    expect(page.body).not.toContain('Sign in with your organisation') // no OIDC client configured
  })

  it('the feed needs a credential', async () => {
    const app = await gateway()
    expectProblem(await app.inject({ method: 'GET', url: '/approvals/ui/feed' }), 401, 'TOOLGATE_UNAUTHENTICATED')
  })

  it('an approver sees every pending request with the tool\'s description; a requester sees only their own, undecidable', async () => {
    const app = await gateway()
    const mine = (await app.inject(call('pay', { to: 'mallory', amount: 700 }, KEYS.alice))).json().id
    const theirs = (await app.inject(call('pay', { to: 'trent', amount: 300 }, KEYS.carol))).json().id
    const approver = (await feed(app, KEYS.dave)).json()
    expect(approver.viewer).toEqual({ id: 'dave', mayDecide: true, session: false })
    expect(approver.pending.map((p: { id: string }) => p.id)).toEqual([mine, theirs])
    expect(approver.pending[0]).toMatchObject({ tool: 'pay', description: 'Pay an amount; above 100 a person approves first.', effects: ['financial', 'irreversible'], input: { to: 'mallory', amount: 700 }, requestedBy: 'alice' })
    expect(approver.pending[0]).not.toHaveProperty('cannotDecide')
    const requester = (await feed(app, KEYS.alice)).json()
    expect(requester.viewer.mayDecide).toBe(false)
    expect(requester.pending.map((p: { id: string }) => p.id)).toEqual([mine])
    expect(requester.pending[0].cannotDecide).toContain('tools:approve')
    // bob may approve, but not his own request
    const own = (await app.inject(call('pay', { to: 'x', amount: 500 }, KEYS.bob))).json().id
    const bobs = (await feed(app, KEYS.bob)).json().pending.find((p: { id: string }) => p.id === own)
    expect(bobs.cannotDecide).toMatch(/own approval/)
  })

  it('answers 304 to its own ETag until something changes; a decision shows under recent decisions for the approver and the requester only', async () => {
    const app = await gateway()
    const { id } = (await app.inject(call('pay', { to: 'mallory', amount: 700 }, KEYS.alice))).json()
    const first = await feed(app, KEYS.dave)
    const etag = String(first.headers.etag)
    const same = await feed(app, KEYS.dave, { 'if-none-match': etag })
    expect([same.statusCode, same.body]).toEqual([304, ''])
    await decide(app, id, 'reject', KEYS.dave, 'not today')
    const changed = await feed(app, KEYS.dave, { 'if-none-match': etag })
    expect(changed.statusCode).toBe(200)
    expect(changed.json()).toMatchObject({ pending: [], recent: [{ id, tool: 'pay', status: 'rejected', requestedBy: 'alice', decidedBy: 'dave', note: 'not today' }] })
    expect((await feed(app, KEYS.alice)).json().recent).toHaveLength(1)
    expect((await feed(app, KEYS.carol)).json().recent).toEqual([])
  })

  it('with an OIDC client configured, the page offers the sign-in; without JWT the setting stops start-up', async () => {
    expect(() => loadConfig({ APPROVALS_OIDC_CLIENT_ID: 'page' }, { apiKeys: API_KEYS })).toThrow(/approvalsOidcClientId.*JWT_ISSUER/)
    const app = await gateway({ jwt: { issuer: 'http://127.0.0.1:9', audience: 'toolgate', algorithms: ['RS256'], jwksUrl: 'http://127.0.0.1:9/jwks' }, approvalsOidcClientId: 'page' })
    expect((await app.inject({ method: 'GET', url: '/approvals/ui' })).body).toContain('href="ui/login"')
    // The issuer is down: signing in says so, with Retry-After.
    const login = await app.inject({ method: 'GET', url: '/approvals/ui/login' })
    expectProblem(login, 503, 'TOOLGATE_UNAVAILABLE')
  })
})
