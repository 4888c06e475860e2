import { describe, expect, it } from 'vitest'
import { loadToolsFromDir } from '../../src/services/loading/loader.js'
import { httpTools } from '../fixtures/http-tools.js'
import { auth, KEYS, testApp } from './helpers.js'
import { expectProblem } from './problem-shape.js'

const hostile = await loadToolsFromDir(new URL('../fixtures/hostile-tools', import.meta.url).pathname)
const tools = [...hostile, ...httpTools]
const call = (id: string, payload: object = {}) => ({ method: 'POST' as const, url: `/tools/${id}`, headers: auth(KEYS.admin), payload })

describe('hostile tools', () => {
  it.each([
    ['throw_number', 500, 'TOOLGATE_TOOL_FAILED'],
    ['throw_null', 500, 'TOOLGATE_TOOL_FAILED'],
    ['never_settles', 504, 'TOOLGATE_TIMEOUT'],
    ['circular', 502, 'TOOLGATE_INVALID_OUTPUT'],
    ['huge', 502, 'TOOLGATE_INVALID_OUTPUT'],
    ['wrong_type', 502, 'TOOLGATE_INVALID_OUTPUT'],
  ])('%s answers %i %s and leaks nothing', async (id, status, code) => {
    const app = await testApp({}, tools)
    const response = await app.inject(call(id))
    expectProblem(response, status, code)
    expect(response.body.length).toBeLessThan(2000)
    expect(response.body).not.toMatch(/xxxxxxxxxx|"self"|\b42\b/)
  })

  it('a tool that mutates its input changes only its own parsed copy', async () => {
    const app = await testApp({}, tools)
    const payload = { list: [1, 2] }
    const response = await app.inject({ ...call('mutates_input', payload), headers: { ...auth(KEYS.admin), 'idempotency-key': 'm1' } })
    expect(response.json()).toEqual({ list: [1, 2, 666] })
    expect(payload).toEqual({ list: [1, 2] })
    // The key's fingerprint was taken before execute: the same request still replays, not 422.
    const again = await app.inject({ ...call('mutates_input', { list: [1, 2] }), headers: { ...auth(KEYS.admin), 'idempotency-key': 'm1' } })
    expect(again.headers['idempotent-replayed']).toBe('true')
  })

  it('the gateway keeps answering other calls while hostile tools run', async () => {
    const app = await testApp({}, tools)
    const hostileCalls = ['never_settles', 'huge', 'circular', 'throw_null'].map((id, i) => app.inject({ ...call(id), headers: { ...auth(KEYS.admin), 'x-session-id': `h${i}` } }))
    const started = performance.now()
    const echo = await app.inject({ ...call('echo', { text: 'still here' }), headers: { ...auth(KEYS.admin), 'x-session-id': 'calm' } })
    expect(echo.statusCode).toBe(200)
    expect((await app.inject({ method: 'GET', url: '/healthz' })).statusCode).toBe(200)
    // Served beside them, not behind them: waiting behind never_settles would take its 200 ms
    // timeout plus the 5 s abandon grace. 3 s leaves room for huge's 50 MB on a loaded machine.
    expect(performance.now() - started).toBeLessThan(3_000)
    await Promise.all(hostileCalls)
  })
})
