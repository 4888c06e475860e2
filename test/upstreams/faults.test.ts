import { afterEach, describe, expect, it } from 'vitest'
import type { FastifyInstance } from 'fastify'
import { buildApp } from '../../plugins/app.js'
import { loadConfig, type ConfigInput } from '../../src/services/config.js'
import { httpTools } from '../fixtures/http-tools.js'
import { API_KEYS, KEYS } from '../approvals/helpers.js'
import { SLOW } from '../slow.js'
import { eventually, fixture, isRunning, linesOf, tempDir, upstreamsFile } from './helpers.js'

/*
 * Faults of an upstream, on a server built with the official SDK that logs every call it
 * receives: what reached the upstream is read from its own log, not inferred from answers.
 */

const apps: FastifyInstance[] = []
afterEach(async () => { await Promise.all(apps.splice(0).map(async app => { await app.close() })) })

const alice = { 'x-api-key': KEYS.alice }

async function gateway (file: Record<string, unknown>, overrides: ConfigInput = {}): Promise<FastifyInstance> {
  const config = loadConfig({}, { apiKeys: API_KEYS, upstreamsFile: upstreamsFile(file), ...overrides })
  const app = await buildApp({ config, tools: httpTools })
  apps.push(app)
  return app
}

const call = async (app: FastifyInstance, tool: string, body: unknown = {}, headers: Record<string, string> = {}) =>
  await app.inject({ method: 'POST', url: `/tools/${tool}`, payload: body as object, headers: { ...alice, ...headers } })

const callsOf = (dir: string, name: string) => linesOf(dir, 'calls.log').map(line => JSON.parse(line) as { name: string }).filter(entry => entry.name === name)
const lastPid = (dir: string) => Number(linesOf(dir, 'starts.log').at(-1))

describe('upstream faults', { timeout: SLOW.PROCESS_MS }, () => {
  it('a child killed mid-call: the non-read-only call is not retried, its outcome is unknown, and the server is restarted', async () => {
    const dir = tempDir()
    const app = await gateway({ mcpServers: { up: fixture(dir) } })
    const pending = call(app, 'up_hang', { tag: 'money' })
    await eventually(() => callsOf(dir, 'hang').length === 1, 'the upstream got the call')
    const first = lastPid(dir)
    process.kill(first, 'SIGKILL')
    const response = await pending
    expect(response.statusCode).toBe(502)
    expect(response.json()).toMatchObject({ code: 'TOOLGATE_UPSTREAM_FAILED', outcome: 'unknown' })
    await eventually(async () => (await call(app, 'up_record', { tag: 'after' })).statusCode === 200, 'the restarted server answers')
    expect(linesOf(dir, 'starts.log')).toHaveLength(2)
    expect(callsOf(dir, 'hang')).toHaveLength(1)
    expect(isRunning(first)).toBe(false)
  })

  it('a read-only call cut off mid-way is retried once on the fresh connection', async () => {
    const dir = tempDir()
    const app = await gateway({ mcpServers: { up: fixture(dir) } })
    const response = await call(app, 'up_read_record', { tag: 'r' })
    expect(response.statusCode).toBe(200)
    expect(response.json().content[0].text).toBe('read ok')
    expect(callsOf(dir, 'readRecord')).toHaveLength(2)
    expect(linesOf(dir, 'starts.log')).toHaveLength(2)
  })

  it('a crash loop: bounded backoff, its tools stay listed and answer 503 with Retry-After, the others still serve', async () => {
    const crashy = tempDir()
    const healthy = tempDir()
    const app = await gateway({ mcpServers: { crashy: fixture(crashy, { FIXTURE_CRASH_AFTER_FIRST: '1' }), ok: fixture(healthy) } })
    const died = await call(app, 'crashy_die', { tag: 'x' })
    expect(died.statusCode, died.body).toBe(502)
    await eventually(() => linesOf(crashy, 'starts.log').length >= 3, 'it was restarted twice')
    const down = await call(app, 'crashy_record', { tag: 'y' })
    expect(down.statusCode).toBe(503)
    expect(down.json()).toMatchObject({ code: 'TOOLGATE_UPSTREAM_UNAVAILABLE', upstream: 'crashy' })
    expect(Number(down.headers['retry-after'])).toBeGreaterThanOrEqual(1)
    const ids = (await app.inject({ method: 'GET', url: '/tools', headers: alice })).json<{ tools: Array<{ id: string }> }>().tools.map(tool => tool.id)
    expect(ids).toContain('crashy_record')
    expect((await call(app, 'ok_record', { tag: 'z' })).statusCode).toBe(200)
    expect((await call(app, 'echo', { text: 'local' })).statusCode).toBe(200)
    // Not marked required: readiness does not depend on it.
    expect((await app.inject({ method: 'GET', url: '/readyz' })).statusCode).toBe(200)
    const status = (await app.inject({ method: 'GET', url: '/upstreams', headers: alice })).json<{ upstreams: Array<Record<string, unknown>> }>().upstreams
    expect(status.find(s => s.name === 'crashy')).toMatchObject({ state: 'down', transport: 'stdio', lastError: expect.any(String) })
    expect(status.find(s => s.name === 'ok')).toMatchObject({ state: 'up', protocolVersion: '2025-11-25' })
    const metrics = (await app.inject({ method: 'GET', url: '/metrics' })).body
    expect(metrics).toContain('toolgate_upstream_up{upstream="crashy"} 0')
    expect(metrics).toContain('toolgate_upstream_up{upstream="ok"} 1')
    // Backoff doubles from 250 ms: in two more seconds at most a few more attempts, not hundreds.
    const before = linesOf(crashy, 'starts.log').length
    await new Promise(resolve => setTimeout(resolve, 2_000))
    expect(linesOf(crashy, 'starts.log').length - before).toBeLessThanOrEqual(3)
    const restarts = /toolgate_upstream_restarts_total\{upstream="crashy"\} (\d+)/.exec((await app.inject({ method: 'GET', url: '/metrics' })).body)
    expect(Number(restarts?.[1])).toBeGreaterThanOrEqual(2)
  })

  it('an upstream the file marks required holds readiness while it is down', async () => {
    const dir = tempDir()
    const app = await gateway({ mcpServers: { must: { ...fixture(dir, { FIXTURE_CRASH_AFTER_FIRST: '1' }), required: true } } })
    expect((await app.inject({ method: 'GET', url: '/readyz' })).statusCode).toBe(200)
    await call(app, 'must_die', { tag: 'x' })
    expect((await app.inject({ method: 'GET', url: '/readyz' })).statusCode).toBe(503)
  })

  it('a hung upstream: 504 at the declared timeout, and notifications/cancelled reaches it', async () => {
    const dir = tempDir()
    const app = await gateway({ mcpServers: { up: fixture(dir) }, tools: { up_hang: { timeoutMs: 300, isReadOnly: true } } })
    const response = await call(app, 'up_hang', { tag: 'slow' })
    expect(response.statusCode).toBe(504)
    await eventually(() => linesOf(dir, 'cancelled.log').includes('slow'), 'the upstream saw the cancellation')
  })

  it('garbage on stdout, a malformed result, an oversized or too deep answer and off-schema output are 502 (an oversized one breaks nothing else); isError is 502 with its text bounded', async () => {
    const dir = tempDir()
    const app = await gateway({ mcpServers: { up: fixture(dir) } }, { maxResponseBytes: 64 * 1024 })
    // A log line on stdout by mistake is skipped, as the SDK does.
    expect((await call(app, 'up_chatty')).json().content[0].text).toBe('done')
    const garbage = await call(app, 'up_garbage')
    expect(garbage.statusCode).toBe(502)
    expect(garbage.json().code).toBe('TOOLGATE_UPSTREAM_FAILED')
    await eventually(async () => (await call(app, 'up_chatty')).statusCode === 200, 'the server is back')
    const malformed = await call(app, 'up_malformed')
    expect(malformed.statusCode).toBe(502)
    expect(malformed.json().code).toBe('TOOLGATE_INVALID_OUTPUT')
    await eventually(async () => (await call(app, 'up_huge', { bytes: 10 })).statusCode === 200, 'the server is back')
    const restartsNow = async (): Promise<number> => Number(/toolgate_upstream_restarts_total\{upstream="up"\} (\d+)/.exec((await app.inject({ method: 'GET', url: '/metrics' })).body)?.[1])
    const before = await restartsNow()
    // An answer over the bound fails its own call; the connection carries on (no restart, the next call at once).
    const huge = await call(app, 'up_huge', { bytes: 200 * 1024 })
    expect(huge.statusCode).toBe(502)
    expect(huge.json()).toMatchObject({ code: 'TOOLGATE_UPSTREAM_FAILED', detail: expect.stringContaining('larger than the gateway\'s limit of 65536 bytes') })
    expect((await call(app, 'up_total', {})).json()).toEqual({ total: 42 })
    expect(await restartsNow()).toBe(before)
    const off = await call(app, 'up_total', { off: true })
    expect(off.statusCode).toBe(502)
    expect(off.json().code).toBe('TOOLGATE_INVALID_OUTPUT')
    const failed = await call(app, 'up_fail')
    expect(failed.statusCode).toBe(502)
    expect(failed.json().code).toBe('TOOLGATE_UPSTREAM_TOOL_ERROR')
    expect(failed.json().detail).toMatch(/^upstream says no: y+$/)
    expect(failed.json().detail.length).toBeLessThanOrEqual(2_000)
    // Nested past what any step may walk: the upstream's failure, named, before parseOutput or the encoder see it.
    const deep = await call(app, 'up_deep')
    expect(deep.statusCode).toBe(502)
    expect(deep.json()).toMatchObject({ code: 'TOOLGATE_UPSTREAM_FAILED', detail: 'upstream "up" answered JSON that nests deeper than 1000 levels' })
  })

  it('list_changed adds and removes a tool live', async () => {
    const dir = tempDir()
    const app = await gateway({ mcpServers: { up: fixture(dir) } })
    const ids = async () => (await app.inject({ method: 'GET', url: '/tools', headers: alice })).json<{ tools: Array<{ id: string }> }>().tools.map(tool => tool.id)
    expect(await ids()).not.toContain('up_extra')
    expect((await call(app, 'up_toggle')).statusCode).toBe(200)
    await eventually(async () => (await ids()).includes('up_extra'), 'the new tool is served')
    expect((await call(app, 'up_extra')).json().content[0].text).toBe('extra here')
    await call(app, 'up_toggle')
    await eventually(async () => !(await ids()).includes('up_extra'), 'the tool is gone')
    expect((await call(app, 'up_extra')).statusCode).toBe(404)
  })

  it('an idempotency key: the upstream gets the call once, the repeat is replayed', async () => {
    const dir = tempDir()
    const app = await gateway({ mcpServers: { up: fixture(dir) } })
    const first = await call(app, 'up_record', { tag: 'pay' }, { 'idempotency-key': 'k-1' })
    const second = await call(app, 'up_record', { tag: 'pay' }, { 'idempotency-key': 'k-1' })
    expect(first.statusCode).toBe(200)
    expect(second.statusCode).toBe(200)
    expect(second.body).toBe(first.body)
    expect(callsOf(dir, 'record')).toHaveLength(1)
  })

  it('a per-upstream limit on calls in flight: one slow server cannot take every slot', async () => {
    const dir = tempDir()
    const app = await gateway({ mcpServers: { up: { ...fixture(dir), maxInFlight: 1, maxQueue: 0 } }, tools: { 'up_*': { isReadOnly: true, isConcurrencySafe: true } } })
    const hung = call(app, 'up_hang', { tag: 'holds-the-slot' }, { 'x-session-id': 's1' })
    await eventually(() => callsOf(dir, 'hang').length === 1, 'the slow call runs')
    const refused = await call(app, 'up_record', { tag: 'b' }, { 'x-session-id': 's2' })
    expect(refused.statusCode, refused.body).toBe(429)
    expect(refused.json().code).toBe('TOOLGATE_QUEUE_FULL')
    expect((await call(app, 'echo', { text: 'local still serves' })).statusCode).toBe(200)
    await app.close()
    await hung
  })

  it('stops every child when it closes: no orphans', async () => {
    const dir = tempDir()
    const app = await gateway({ mcpServers: { a: fixture(dir), b: fixture(dir) } })
    const pids = linesOf(dir, 'starts.log').map(Number)
    expect(pids).toHaveLength(2)
    expect(pids.every(isRunning)).toBe(true)
    await app.close()
    expect(pids.some(isRunning)).toBe(false)
  })
})

describe('operator declarations that name no tool', { timeout: SLOW.PROCESS_MS }, () => {
  it('an exact id of a serving server that names no tool stops start-up (a typo would leave a tool undeclared); one of a disabled server does not', async () => {
    const dir = tempDir()
    await expect(gateway({ mcpServers: { up: fixture(dir) }, tools: { up_recrod: { requiresApproval: true } } })).rejects.toThrow('tools.up_recrod names no upstream tool')
    const app = await gateway({ mcpServers: { up: fixture(dir), off: { command: 'nothing', disabled: true } }, tools: { off_anything: { requiresApproval: true } } })
    expect((await call(app, 'up_record', { tag: 'fine' })).statusCode).toBe(200)
  })
})
