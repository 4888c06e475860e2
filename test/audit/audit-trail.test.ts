import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { createHash } from 'node:crypto'
import { describe, expect, it } from 'vitest'
import { z } from 'zod'
import { pino } from 'pino'
import { defineTool } from '../../src/index.js'
import { AuditTrail } from '../../src/services/audit/audit-trail.js'
import { verifyAuditText } from '../../src/services/audit/verify.js'
import { loadConfig } from '../../src/services/config.js'
import { GatewayMetrics } from '../../src/services/metrics/gateway-metrics.js'
import { openAuditTrail } from '../../src/services/audit/open.js'
import { httpTools } from '../fixtures/http-tools.js'
import { auth, KEYS, testApp } from '../http/helpers.js'

const tmp = (): string => join(mkdtempSync(join(tmpdir(), 'toolgate-audit-')), 'audit.log')
const records = (path: string): Array<Record<string, unknown>> => readFileSync(path, 'utf8').trimEnd().split('\n').map(line => JSON.parse(line) as Record<string, unknown>)
const digest = (input: unknown): string => `sha256:${createHash('sha256').update(JSON.stringify(input)).digest('hex')}`

const moveFile = defineTool({
  id: 'move_file', kind: 'write', description: 'Pretends to move a file.', isReadOnly: false, isConcurrencySafe: false, effects: ['affects-others'],
  inputSchema: z.object({ from: z.string(), to: z.string() }), outputSchema: z.object({ moved: z.boolean() }),
  touchedResourcesOf: input => [(input as { from: string }).from],
  mutatedResourcesOf: input => [(input as { from: string }).from, (input as { to: string }).to],
  debugSteps: (_result, debug) => { debug.step('renamed', { atomic: true }) },
  authorize () {}, execute: () => ({ moved: true }),
})
const tools = [...httpTools, moveFile]

describe('the audit trail over HTTP', () => {
  it('a run of mixed calls writes one chained line per call of a non-read-only tool, refusals included', async () => {
    const path = tmp()
    const app = await testApp({ auditLog: path }, tools)
    const post = async (tool: string, payload: object, headers: Record<string, string> = auth(KEYS.admin), query = ''): Promise<{ status: number, requestId: string }> => {
      const response = await app.inject({ method: 'POST', url: `/tools/${tool}${query}`, headers, payload })
      return { status: response.statusCode, requestId: String(response.headers['x-request-id']) }
    }
    const calls = [
      await post('echo', { text: 'read-only: not audited' }),
      await post('move_file', { from: '/a', to: '/b' }),
      await post('guarded', { deny: true }),
      await post('refuse', {}),
      await post('move_file', { from: '/c', to: '/d' }, {}),
      await post('move_file', { from: '/e', to: '/f' }, auth(KEYS.admin), '?mode=plan'),
      await post('move_file', { from: '/g', to: '/h' }, auth(KEYS.admin), '?dryRun=true'),
    ]
    expect(calls.map(c => c.status)).toEqual([200, 200, 403, 409, 401, 403, 200])
    await app.close()

    expect(verifyAuditText(readFileSync(path, 'utf8'))).toMatchObject({ ok: true, lines: 6 })
    const lines = records(path)
    expect(lines.map(l => [l.seq, l.tool, l.outcome, l.status])).toEqual([
      [1, 'move_file', 'ok', 200], [2, 'guarded', 'forbidden', 403], [3, 'refuse', 'tool_error', 409],
      [4, 'move_file', 'unauthenticated', 401], [5, 'move_file', 'forbidden', 403], [6, 'move_file', 'dry_run', 200],
    ])
    expect(lines[0]).toMatchObject({
      type: 'toolgate.audit/v1', event: 'call', principal: 'admin', kind: 'write', effects: ['affects-others'], executed: true,
      inputDigest: digest({ from: '/a', to: '/b' }), touched: ['/a'], mutated: ['/a', '/b'], debugSteps: [{ name: 'renamed', data: { atomic: true } }],
      requestId: calls[1]!.requestId,
    })
    expect(lines[0]).not.toHaveProperty('input')
    expect(lines[0]!.time).toMatch(/^\d{4}-\d\d-\d\dT/)
    expect(lines[1]).toMatchObject({ code: 'TOOLGATE_DENIED', executed: false, principal: 'admin' })
    expect(lines[2]).toMatchObject({ code: 'ALREADY_DONE', executed: true })
    expect(lines[3]).toMatchObject({ code: 'TOOLGATE_UNAUTHENTICATED', principal: 'unauthenticated', requestId: calls[4]!.requestId })
    expect(lines[4]).toMatchObject({ code: 'TOOLGATE_PLAN_MODE', executed: false })
    expect(lines[5]).toMatchObject({ dryRun: true, executed: false })
  })

  it('names the limit that refused a call, or asked a person for it', async () => {
    const path = tmp()
    const limited = (id: string, over: 'refuse' | 'approve') => defineTool({
      id, kind: 'write', description: 'Once a day.', isReadOnly: false, isConcurrencySafe: false, effects: ['irreversible'],
      inputSchema: z.object({}), outputSchema: z.object({ ok: z.boolean() }), authorize () {}, execute: () => ({ ok: true }),
      limits: [{ name: 'daily', per: 'principal', over, quota: { calls: 1, window: 'day' } }],
    })
    const app = await testApp({ auditLog: path }, [limited('launch', 'refuse'), limited('launch_asking', 'approve')])
    const statuses: number[] = []
    for (const tool of ['launch', 'launch', 'launch_asking', 'launch_asking']) statuses.push((await app.inject({ method: 'POST', url: `/tools/${tool}`, headers: auth(KEYS.admin), payload: {} })).statusCode)
    expect(statuses).toEqual([200, 429, 200, 202])
    await app.close()
    expect(records(path).map(line => [line.tool, line.status, line.limit, line.limitAction])).toEqual([
      ['launch', 200, undefined, undefined], ['launch', 429, 'launch.daily', 'refused'],
      ['launch_asking', 200, undefined, undefined], ['launch_asking', 202, 'launch_asking.daily', 'asked'],
    ])
  })

  it('writes the input itself only when configured', async () => {
    const path = tmp()
    const app = await testApp({ auditLog: path, auditLogInputs: true }, tools)
    await app.inject({ method: 'POST', url: '/tools/move_file', headers: auth(KEYS.admin), payload: { from: '/x', to: '/y' } })
    await app.close()
    expect(records(path)[0]).toMatchObject({ input: { from: '/x', to: '/y' }, inputDigest: digest({ from: '/x', to: '/y' }) })
  })

  it('a restart continues the chain of the same file', async () => {
    const path = tmp()
    for (const round of [1, 2]) {
      const app = await testApp({ auditLog: path }, tools)
      await app.inject({ method: 'POST', url: '/tools/move_file', headers: auth(KEYS.admin), payload: { from: `/${round}`, to: '/z' } })
      await app.close()
    }
    expect(verifyAuditText(readFileSync(path, 'utf8'))).toMatchObject({ ok: true, lines: 2 })
    expect(records(path).map(l => l.seq)).toEqual([1, 2])
  })

  it('refuses to start on a file whose chain is broken, rather than append to it', async () => {
    const path = tmp()
    const app = await testApp({ auditLog: path }, tools)
    await app.inject({ method: 'POST', url: '/tools/move_file', headers: auth(KEYS.admin), payload: { from: '/1', to: '/2' } })
    await app.inject({ method: 'POST', url: '/tools/move_file', headers: auth(KEYS.admin), payload: { from: '/3', to: '/4' } })
    await app.close()
    writeFileSync(path, readFileSync(path, 'utf8').replace('"/1"', '"/9"'))
    await expect(testApp({ auditLog: path }, tools)).rejects.toThrow(/does not verify \(line 1/)
  })
})

describe('approval decisions', () => {
  it('are chained lines of their own, beside the calls', async () => {
    const path = tmp()
    const app = await testApp({ auditLog: path }, tools)
    await app.inject({ method: 'POST', url: '/tools/move_file', headers: auth(KEYS.admin), payload: { from: '/1', to: '/2' } })
    app.audit!.approvalDecided({ approvalId: 'apr_1', decision: 'approved', tool: 'move_file', effects: ['affects-others'], inputDigest: 'sha256:ab', requestedBy: 'caller', decidedBy: 'admin', note: 'fine' })
    await app.close()
    expect(verifyAuditText(readFileSync(path, 'utf8'))).toMatchObject({ ok: true, lines: 2 })
    expect(records(path)[1]).toMatchObject({ seq: 2, event: 'approval', approvalId: 'apr_1', decision: 'approved', decidedBy: 'admin', requestedBy: 'caller' })
  })
})

describe('a full buffer', () => {
  it('drops lines, counts them in a metric, logs a warning, and records the drop in the chain', async () => {
    const path = tmp()
    const metrics = new GatewayMetrics(tools, { audit: true })
    const warnings: unknown[] = []
    const log = pino({ level: 'warn' }, { write: (line: string) => { warnings.push(JSON.parse(line)) } })
    const config = loadConfig({}, { auditLog: path, auditBufferLines: 2 })
    const audit = (await openAuditTrail(config, log, lines => { metrics.auditDropped(lines) }))!
    const record = { callId: 'c', toolId: 'move_file', kind: 'write', effects: [], effectsLabel: 'none', readOnly: false, domain: 'd', outcome: 'ok', status: 200, dryRun: false, escalated: false, executed: true, startedAt: Date.now(), queueMs: 0, executeMs: 0, durationMs: 0, touchedResources: [], mutatedResources: [], debugSteps: [] } as const
    // Two lines wait for the write (it starts on the next turn): the other 48 of this burst find
    // the buffer full. One principal each, so that the whole buffer is what stops them (one
    // principal's share is tested in writer.test.ts).
    for (let i = 0; i < 50; i++) audit.call({ ...record, callId: `c${i}` }, { principal: `p${i}`, requestId: `r${i}`, input: {} })
    await audit.flush()
    audit.call({ ...record, callId: 'after' }, { principal: 'p', requestId: 'after', input: {} })
    await audit.close()

    expect(await metrics.render()).toContain('toolgate_audit_dropped_total 48')
    expect(warnings).toEqual([
      expect.objectContaining({ bufferLines: 2, msg: expect.stringMatching(/audit buffer full/) }),
      expect.objectContaining({ dropped: 48, msg: expect.stringMatching(/audit lines dropped/) }),
    ])
    const lines = records(path)
    expect(verifyAuditText(readFileSync(path, 'utf8'))).toMatchObject({ ok: true, lines: 4 })
    expect(lines.map(l => l.event === 'dropped' ? `dropped ${String(l.count)}` : l.callId)).toEqual(['c0', 'c1', 'dropped 48', 'after'])
  })
})

describe('read-only tools', () => {
  it('are not covered', () => {
    expect(AuditTrail.covers({ readOnly: true } as never)).toBe(false)
    expect(AuditTrail.covers({ readOnly: false } as never)).toBe(true)
  })
})
