import { readFileSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import { hashApiKey } from '../../src/services/auth/api-keys.js'
import { API_KEYS, auth, KEYS, testApp } from '../http/helpers.js'
import { expectProblem } from '../http/problem-shape.js'
import { tempDir } from '../upstreams/helpers.js'

/*
 * The console's reads other than the calls: the catalog with rules and approvals, the charts'
 * points, the upstreams, the audit tail and its verification. Each needs gateway:read; none
 * answers an input.
 */

const OPERATOR = 'operator-key-0123456789'
const READS = ['/console/tools', '/console/series', '/console/upstreams', '/console/audit']

async function gateway (auditLog?: string): ReturnType<typeof testApp> {
  return await testApp({
    apiKeys: [...API_KEYS, { principal: 'operator', sha256: hashApiKey(OPERATOR), scopes: ['gateway:read'] }],
    approvalRules: [{ principal: 'caller', tools: ['ech*'], approvers: ['admin'] }],
    ...(auditLog === undefined ? {} : { auditLog, auditLogInputs: true }),
  })
}

describe('the console\'s reads', () => {
  it('refuse a principal without gateway:read (403) and an anonymous one (401), the verification too', async () => {
    const app = await gateway(join(tempDir(), 'audit.log'))
    for (const url of READS) {
      expectProblem(await app.inject({ method: 'GET', url, headers: auth(KEYS.admin) }), 403, 'TOOLGATE_FORBIDDEN')
      expectProblem(await app.inject({ method: 'GET', url }), 401, 'TOOLGATE_UNAUTHENTICATED')
    }
    expectProblem(await app.inject({ method: 'POST', url: '/console/audit/verify', headers: auth(KEYS.admin) }), 403, 'TOOLGATE_FORBIDDEN')
  })

  it('list every tool with why it may wait for approval, and answer 304 while nothing changed', async () => {
    const app = await gateway()
    const first = await app.inject({ method: 'GET', url: '/console/tools', headers: auth(OPERATOR) })
    expect(first.statusCode).toBe(200)
    const echo = first.json<{ tools: Array<Record<string, unknown>> }>().tools.find(tool => tool.id === 'echo')
    expect(echo).toMatchObject({ state: 'serving', rules: {}, approval: [{ by: 'rule', principal: 'caller', approvers: ['admin'] }], limits: [] })
    const again = await app.inject({ method: 'GET', url: '/console/tools', headers: { ...auth(OPERATOR), 'if-none-match': first.headers.etag as string } })
    expect(again.statusCode).toBe(304)
    expect(again.body).toBe('')
  })

  it('tail the audit file without inputs, find a call\'s line, and verify the chain, naming a changed line', async () => {
    const audit = join(tempDir(), 'audit.log')
    const app = await gateway(audit)
    for (let i = 0; i < 3; i++) expect((await app.inject({ method: 'POST', url: '/tools/slow_write', payload: { ms: 1, note: 'secret words' }, headers: auth(KEYS.caller) })).statusCode).toBe(200)
    const called = (await app.inject({ method: 'GET', url: '/console/calls', headers: auth(OPERATOR) })).json<{ calls: Array<{ callId: string }> }>().calls
    const verdict = await app.inject({ method: 'POST', url: '/console/audit/verify', headers: auth(OPERATOR) })
    expect(verdict.json()).toMatchObject({ ok: true })
    const records = verdict.json<{ records: number }>().records
    expect(records).toBe(3)
    expect(readFileSync(audit, 'utf8')).toContain('secret words')
    const tail = (await app.inject({ method: 'GET', url: '/console/audit?max=2', headers: auth(OPERATOR) })).json<{ lines: Array<Record<string, unknown>> }>()
    expect(tail.lines.map(line => line.seq)).toEqual([2, 3])
    expect(JSON.stringify(tail)).not.toContain('secret')
    const one = (await app.inject({ method: 'GET', url: `/console/audit?callId=${called[0]!.callId}`, headers: auth(OPERATOR) })).json<{ lines: Array<Record<string, unknown>> }>()
    expect(one.lines.map(line => line.callId)).toEqual([called[0]!.callId])
    const lines = readFileSync(audit, 'utf8').split('\n')
    lines[0] = lines[0]!.replace('"status":', '"status":1')
    writeFileSync(audit, lines.join('\n'))
    const broken = (await app.inject({ method: 'POST', url: '/console/audit/verify', headers: auth(OPERATOR) })).json()
    expect(broken).toMatchObject({ ok: false, line: 1, reason: expect.stringMatching(/^changed/) })
  })

  it('say clearly when there is no audit file (404)', async () => {
    const app = await gateway()
    expectProblem(await app.inject({ method: 'GET', url: '/console/audit', headers: auth(OPERATOR) }), 404, 'TOOLGATE_NOT_FOUND')
  })
})
