import { describe, expect, it } from 'vitest'
import { runs } from '../fixtures/http-tools.js'
import { auth, KEYS, testApp } from './helpers.js'
import { expectProblem } from './problem-shape.js'

const post = (url: string, payload: object, key: string = KEYS.admin) => ({ method: 'POST' as const, url, headers: auth(key), payload })

describe('plan mode, dry run and escalation over HTTP', () => {
  it('plan mode refuses a tool that is not read-only and runs a read-only one', async () => {
    const app = await testApp()
    expectProblem(await app.inject(post('/tools/slow_write?mode=plan', { ms: 0 })), 403, 'TOOLGATE_PLAN_MODE')
    expect(runs.get('slow_write')).toBeUndefined()
    expect((await app.inject(post('/tools/echo?mode=plan', { text: 'a' }))).statusCode).toBe(200)
  })

  it('dry run validates and authorizes, returns the proposal and executes nothing', async () => {
    const app = await testApp()
    const response = await app.inject(post('/tools/slow_write?dryRun=true', { ms: 5 }))
    expect(response.statusCode).toBe(200)
    expect(response.json()).toEqual({ ms: 5 })
    expect(runs.get('slow_write')).toBeUndefined()
    expectProblem(await app.inject(post('/tools/guarded?dryRun=true', { deny: true })), 403, 'TOOLGATE_DENIED')
    expect((await app.inject(post('/tools/escalatable?dryRun=true', {}))).json()).toEqual({ wouldEscalate: true })
  })

  it('escalation: refused for a tool without support; otherwise a person approves it, whatever scopes the caller holds', async () => {
    const app = await testApp()
    expectProblem(await app.inject(post('/tools/echo?escalate=true', { text: 'a' })), 400, 'TOOLGATE_ESCALATION_UNSUPPORTED')
    // admin holds the old tools:escalate scope: it no longer grants anything.
    for (const key of [KEYS.caller, KEYS.admin]) {
      const response = await app.inject(post('/tools/escalatable?escalate=true', {}, key))
      expect(response.statusCode).toBe(202)
      expect(response.json()).toMatchObject({ status: 'pending', escalate: true, reasons: ['escalation'] })
    }
    expect((await app.inject(post('/tools/escalatable', {}))).json()).toEqual({ escalated: false })
  })
})

describe('GET /tools and GET /tools/{id}', () => {
  it('lists the active tools with effects, flags and JSON Schemas', async () => {
    const app = await testApp()
    const { tools } = (await app.inject({ method: 'GET', url: '/tools', headers: auth(KEYS.admin) })).json<{ tools: Array<Record<string, unknown>> }>()
    const slow = tools.find(t => t.id === 'slow_write')!
    expect(slow).toMatchObject({ kind: 'write', effects: ['irreversible'], flags: { readOnly: false, concurrencySafe: false }, timeoutMs: 2000 })
    expect(slow.inputSchema).toMatchObject({ type: 'object', properties: { ms: { type: 'integer' } } })
    expect(tools.map(t => t.id)).toContain('admin_only')
  })

  it('hides inactive tools from listings and 404s them', async () => {
    const app = await testApp()
    const { tools } = (await app.inject({ method: 'GET', url: '/tools', headers: auth(KEYS.caller) })).json<{ tools: Array<{ id: string }> }>()
    expect(tools.map(t => t.id)).not.toContain('admin_only')
    expectProblem(await app.inject({ method: 'GET', url: '/tools/admin_only', headers: auth(KEYS.caller) }), 404, 'TOOLGATE_NOT_FOUND')
    expect((await app.inject({ method: 'GET', url: '/tools/admin_only', headers: auth(KEYS.admin) })).json().id).toBe('admin_only')
  })

  it('hides tools the rules deny', async () => {
    const app = await testApp({ rules: [{ principal: '*', allow: ['*'], deny: ['slow_*'] }] })
    const { tools } = (await app.inject({ method: 'GET', url: '/tools', headers: auth(KEYS.admin) })).json<{ tools: Array<{ id: string }> }>()
    expect(tools.map(t => t.id)).not.toContain('slow_write')
    expect(tools.map(t => t.id)).toContain('echo')
  })

  it('listing needs authentication and the tools:read scope', async () => {
    const app = await testApp({ apiKeys: [{ principal: 'nobody', sha256: 'a'.repeat(64), scopes: [] }] })
    expectProblem(await app.inject({ method: 'GET', url: '/tools' }), 401, 'TOOLGATE_UNAUTHENTICATED')
  })
})
