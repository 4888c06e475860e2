import type { AddressInfo } from 'node:net'
import { describe, expect, it } from 'vitest'
import { hashApiKey } from '../../src/services/auth/api-keys.js'
import { API_KEYS, auth, KEYS, testApp } from '../http/helpers.js'
import { expectProblem } from '../http/problem-shape.js'

/*
 * `GET /console/calls`: what the operators' console reads of the calls, REST and MCP alike,
 * behind the scope gateway:read; never an input.
 */

const OPERATOR = 'operator-key-0123456789'

async function gateway (): ReturnType<typeof testApp> {
  return await testApp({ apiKeys: [...API_KEYS, { principal: 'operator', sha256: hashApiKey(OPERATOR), scopes: ['gateway:read'] }] })
}

describe('GET /console/calls', () => {
  it('lists REST and MCP calls as they finish, without inputs, to a principal with gateway:read only', async () => {
    const app = await gateway()
    expectProblem(await app.inject({ method: 'GET', url: '/console/calls', headers: auth(KEYS.admin) }), 403, 'TOOLGATE_FORBIDDEN')
    expectProblem(await app.inject({ method: 'GET', url: '/console/calls' }), 401, 'TOOLGATE_UNAUTHENTICATED')
    const start = (await app.inject({ method: 'GET', url: '/console/calls', headers: auth(OPERATOR) })).json<{ next: number }>().next
    await app.inject({ method: 'POST', url: '/tools/echo', payload: { text: 'secret words' }, headers: auth(KEYS.caller) })
    await app.inject({ method: 'POST', url: '/mcp', payload: { jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'echo', arguments: { text: 'more secret' } } }, headers: { ...auth(KEYS.caller), accept: 'application/json, text/event-stream', 'mcp-protocol-version': '2025-11-25' } })
    const read = await app.inject({ method: 'GET', url: `/console/calls?after=${start}`, headers: auth(OPERATOR) })
    const { calls, next } = read.json<{ calls: Array<Record<string, unknown>>, next: number }>()
    expect(calls.map(call => [call.tool, call.transport, call.principal, call.outcome])).toEqual([['echo', 'rest', 'caller', 'ok'], ['echo', 'mcp', 'caller', 'ok']])
    expect(read.body).not.toContain('secret')
    expect(next).toBe(calls[1]!.seq)
  })

  it('waits for the next call when asked, and answers at once when one comes', async () => {
    const app = await gateway()
    await app.listen({ host: '127.0.0.1', port: 0 })
    const base = `http://127.0.0.1:${(app.server.address() as AddressInfo).port}`
    const { next } = await (await fetch(`${base}/console/calls`, { headers: auth(OPERATOR) })).json() as { next: number }
    const started = Date.now()
    const waiting = fetch(`${base}/console/calls?after=${next}&waitMs=20000`, { headers: auth(OPERATOR) })
    await new Promise(resolve => setTimeout(resolve, 100))
    await fetch(`${base}/tools/echo`, { method: 'POST', headers: { ...auth(KEYS.caller), 'content-type': 'application/json' }, body: JSON.stringify({ text: 'x' }) })
    const { calls } = await (await waiting).json() as { calls: Array<{ tool: string }> }
    expect(calls.map(call => call.tool)).toEqual(['echo'])
    expect(Date.now() - started).toBeLessThan(10_000)
  })

  it('refuses a bad cursor or wait with a 400', async () => {
    const app = await gateway()
    for (const query of ['after=-1', 'waitMs=60000', 'max=0', 'after=x']) {
      expectProblem(await app.inject({ method: 'GET', url: `/console/calls?${query}`, headers: auth(OPERATOR) }), 400, 'TOOLGATE_INVALID_INPUT')
    }
  })
})
