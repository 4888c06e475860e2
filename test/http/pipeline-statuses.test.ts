import type { LightMyRequestResponse } from 'fastify'
import { describe, expect, it } from 'vitest'
import { z } from 'zod'
import { defineTool } from '../../src/index.js'
import { httpTools, runs } from '../fixtures/http-tools.js'
import { settlesBefore } from '../on-time.js'
import { call as slotCall, slotTools } from '../redis/slot-http.js'
import { auth, KEYS, testApp } from './helpers.js'
import { expectProblem } from './problem-shape.js'

const call = (toolId: string, payload: unknown, key: string = KEYS.admin, query = '') =>
  ({ method: 'POST' as const, url: `/tools/${toolId}${query}`, headers: auth(key), payload: payload as object })

describe('the call pipeline (docs/declaration.md#one-call-step-by-step) over HTTP', () => {
  it('200: returns the parsed output', async () => {
    const app = await testApp()
    const response = await app.inject(call('echo', { text: 'hi' }))
    expect(response.statusCode).toBe(200)
    expect(response.headers['content-type']).toMatch(/^application\/json/)
    expect(response.json()).toEqual({ text: 'hi', length: 2 })
  })

  it('401: no credentials, with an RFC 6750 challenge', async () => {
    const app = await testApp()
    const response = await app.inject({ method: 'POST', url: '/tools/echo', payload: { text: 'hi' } })
    expectProblem(response, 401, 'TOOLGATE_UNAUTHENTICATED')
    expect(response.headers['www-authenticate']).toMatch(/^Bearer realm="toolgate"/)
    expect(runs.get('echo')).toBeUndefined()
  })

  it('401 for a wrong key and for wrong-length keys, never 500', async () => {
    const app = await testApp()
    for (const key of ['x', 'admin-key-0123456788', 'k'.repeat(10_000)]) {
      const response = await app.inject(call('echo', { text: 'hi' }, key))
      expectProblem(response, 401, 'TOOLGATE_UNAUTHENTICATED')
      expect(response.headers['www-authenticate']).toContain('error="invalid_token"')
    }
  })

  it('404: unknown tool and inactive tool look the same', async () => {
    const app = await testApp()
    const unknown = expectProblem(await app.inject(call('nope', {})), 404, 'TOOLGATE_NOT_FOUND')
    const inactive = expectProblem(await app.inject(call('admin_only', {}, KEYS.caller)), 404, 'TOOLGATE_NOT_FOUND')
    expect(Object.keys(inactive).sort()).toEqual(Object.keys(unknown).sort())
    expect((await app.inject(call('admin_only', {}))).statusCode).toBe(200)
  })

  it('403: permission rules deny what is not allowed once a rule exists', async () => {
    const app = await testApp({ rules: [{ principal: 'caller', allow: ['ech?'], deny: [] }] })
    expect((await app.inject(call('echo', { text: 'a' }, KEYS.caller))).statusCode).toBe(200)
    expectProblem(await app.inject(call('slow_write', { ms: 0 }, KEYS.caller)), 403, 'TOOLGATE_FORBIDDEN')
    expect(runs.get('slow_write')).toBeUndefined()
  })

  it('403: a principal without the tools:call scope, with insufficient_scope', async () => {
    const app = await testApp()
    const response = await app.inject(call('echo', { text: 'a' }, KEYS.reader))
    expectProblem(response, 403, 'TOOLGATE_FORBIDDEN')
    expect(response.headers['www-authenticate']).toContain('error="insufficient_scope"')
  })

  it('400: every input issue with its JSON pointer', async () => {
    const app = await testApp()
    const body = expectProblem(await app.inject(call('echo', { text: '', nested: { n: 'x' }, extra: 1 })), 400, 'TOOLGATE_INVALID_INPUT')
    const pointers = (body.errors as Array<{ pointer: string }>).map(e => e.pointer).sort()
    expect(pointers).toEqual(['', '/nested/n', '/text'])
    expect(runs.get('echo')).toBeUndefined()
  })

  it('403: authorize that throws denies with its message', async () => {
    const app = await testApp()
    const body = expectProblem(await app.inject(call('guarded', { deny: true })), 403, 'TOOLGATE_DENIED')
    expect(body.detail).toBe('not for you')
    expect(runs.get('guarded')).toBeUndefined()
  })

  it('500: authorize that returns false is a tool defect, execute never runs, detail is generic', async () => {
    const app = await testApp()
    const body = expectProblem(await app.inject(call('bad_authorize', {})), 500, 'TOOLGATE_TOOL_BAD_DEFINITION')
    expect(body.detail).not.toContain('false')
    expect(runs.get('bad_authorize')).toBeUndefined()
  })

  it('a ToolError keeps its status and code', async () => {
    const app = await testApp()
    const body = expectProblem(await app.inject(call('refuse', {})), 409, 'ALREADY_DONE')
    expect(body.detail).toBe('that was done already')
  })

  it('500: an unexpected throw leaks nothing', async () => {
    const app = await testApp()
    const response = await app.inject(call('crash', {}))
    expectProblem(response, 500, 'TOOLGATE_TOOL_FAILED')
    expect(response.body).not.toContain('hunter2')
  })

  it('502: invalid output is never returned', async () => {
    const app = await testApp()
    const response = await app.inject(call('bad_output', {}))
    expectProblem(response, 502, 'TOOLGATE_INVALID_OUTPUT')
    expect(response.body).not.toContain('SECRET-RAW-VALUE')
  })

  it('504: a tool that ignores its signal times out on time, outcome unknown', async () => {
    // On time: the answer comes before a timer of its timeout plus 100 ms, started when the tool
    // began, fires (the event loop's clock, which a busy machine delays alike for both).
    let answer: Promise<LightMyRequestResponse> | undefined
    let onTime: Promise<boolean> | undefined
    const hang = defineTool({
      id: 'hang_timed', kind: 'write', description: 'Never settles and ignores its signal.', isReadOnly: false, isConcurrencySafe: false, authorize () {}, timeoutMs: 150,
      inputSchema: z.object({}), outputSchema: z.null(),
      execute: () => { onTime = settlesBefore(answer!, 150 + 100); return new Promise<null>(() => {}) },
    })
    const app = await testApp({}, [...httpTools, hang])
    answer = app.inject(call('hang_timed', {}))
    const body = expectProblem(await answer, 504, 'TOOLGATE_TIMEOUT')
    expect(await onTime).toBe(true)
    expect(body.outcome).toBe('unknown')
  })

  it('429 with Retry-After when the session queue is full', async () => {
    const app = await testApp({ maxQueuePerSession: 1 })
    const headers = { ...auth(KEYS.admin), 'x-session-id': 's1' }
    const first = app.inject({ method: 'POST', url: '/tools/slow_write', headers, payload: { ms: 300 } })
    const second = app.inject({ method: 'POST', url: '/tools/slow_write', headers, payload: { ms: 0 } })
    await new Promise(resolve => setTimeout(resolve, 50))
    const third = await app.inject({ method: 'POST', url: '/tools/slow_write', headers, payload: { ms: 0 } })
    expectProblem(third, 429, 'TOOLGATE_QUEUE_FULL')
    expect(Number(third.headers['retry-after'])).toBeGreaterThan(0)
    expect((await first).statusCode).toBe(200)
    expect((await second).statusCode).toBe(200)
  })

  it('503 with Retry-After when the wait for a slot is too long', async () => {
    const app = await testApp({ queueTimeoutMs: 100 })
    const headers = { ...auth(KEYS.admin), 'x-session-id': 's2' }
    const first = app.inject({ method: 'POST', url: '/tools/slow_write', headers, payload: { ms: 400 } })
    await new Promise(resolve => setTimeout(resolve, 20))
    const second = await app.inject({ method: 'POST', url: '/tools/slow_write', headers, payload: { ms: 0 } })
    const problem = expectProblem(second, 503, 'TOOLGATE_QUEUE_TIMEOUT')
    // The session's domain and the configured wait are internals: the detail names neither.
    expect(problem.detail).not.toMatch(/s2|100 ms/)
    expect(second.headers['retry-after']).toBeDefined()
    expect((await first).statusCode).toBe(200)
  })

  it('sessions are separate concurrency domains', async () => {
    // Two calls of a tool that is not concurrency-safe, in two sessions, ran at the same time:
    // each began before the other ended (the tools report when they ran), however slow the machine.
    const app = await testApp({}, slotTools)
    const [a, b] = await Promise.all(['a', 'b'].map(session => slotCall(app, 'slot_exclusive', 200, session)))
    expect([a!.status, b!.status]).toEqual([200, 200])
    expect(a!.ran!.start < b!.ran!.end && b!.ran!.start < a!.ran!.end).toBe(true)
  })
})
