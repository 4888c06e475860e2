import { describe, expect, it } from 'vitest'
import { KEYS, testApp } from '../http/helpers.js'
import { aborted, listeningGateway, mcpTools, started } from './helpers.js'

const HEADERS = { 'content-type': 'application/json', accept: 'application/json, text/event-stream', 'x-api-key': KEYS.caller }
const rpc = (method: string, params: Record<string, unknown> = {}, id: number | null = 1): string =>
  JSON.stringify({ jsonrpc: '2.0', ...(id === null ? {} : { id }), method, params })

describe('POST /mcp: the Streamable HTTP rules', () => {
  it('answers GET and DELETE with 405 and Allow: POST (no server stream, no sessions)', async () => {
    const app = await testApp({}, mcpTools)
    for (const method of ['GET', 'DELETE'] as const) {
      const res = await app.inject({ method, url: '/mcp', headers: { accept: 'text/event-stream', 'x-api-key': KEYS.caller } })
      expect(res.statusCode).toBe(405)
      expect(res.headers.allow).toContain('POST')
    }
  })

  it('answers malformed JSON with 400 and a JSON-RPC parse error', async () => {
    const app = await testApp({}, mcpTools)
    const res = await app.inject({ method: 'POST', url: '/mcp', headers: HEADERS, payload: '{"jsonrpc":' })
    expect(res.statusCode).toBe(400)
    expect(res.json()).toEqual({ jsonrpc: '2.0', id: null, error: { code: -32700, message: expect.any(String) } })
  })

  it('answers a message that is not JSON-RPC, or a batch, with 400 and Invalid Request', async () => {
    const app = await testApp({}, mcpTools)
    for (const payload of ['{"id":3,"method":"ping"}', '[{"jsonrpc":"2.0","id":1,"method":"ping"}]', '{"jsonrpc":"2.0","id":{},"method":"ping"}']) {
      const res = await app.inject({ method: 'POST', url: '/mcp', headers: HEADERS, payload })
      expect(res.statusCode).toBe(400)
      expect(res.json().error.code).toBe(-32600)
    }
  })

  it('answers an unknown method with a JSON-RPC Method not found error', async () => {
    const app = await testApp({}, mcpTools)
    const res = await app.inject({ method: 'POST', url: '/mcp', headers: HEADERS, payload: rpc('resources/list') })
    expect(res.json()).toMatchObject({ id: 1, error: { code: -32601 } })
  })

  it('accepts notifications and client responses with 202 and no body', async () => {
    const app = await testApp({}, mcpTools)
    const note = await app.inject({ method: 'POST', url: '/mcp', headers: HEADERS, payload: rpc('notifications/initialized', {}, null) })
    expect(note.statusCode).toBe(202)
    expect(note.body).toBe('')
    const reply = await app.inject({ method: 'POST', url: '/mcp', headers: HEADERS, payload: '{"jsonrpc":"2.0","id":7,"result":{}}' })
    expect(reply.statusCode).toBe(202)
  })

  it('refuses a foreign Origin with 403 and accepts the own host and configured origins', async () => {
    const app = await testApp({ mcpAllowedOrigins: ['https://app.example'] }, mcpTools)
    const foreign = await app.inject({ method: 'POST', url: '/mcp', headers: { ...HEADERS, origin: 'https://evil.example' }, payload: rpc('ping') })
    expect(foreign.statusCode).toBe(403)
    const configured = await app.inject({ method: 'POST', url: '/mcp', headers: { ...HEADERS, origin: 'https://app.example' }, payload: rpc('ping') })
    expect(configured.statusCode).toBe(200)
    const own = await app.inject({ method: 'POST', url: '/mcp', headers: { ...HEADERS, origin: 'http://localhost:3000', host: 'localhost:3000' }, payload: rpc('ping') })
    expect(own.statusCode).toBe(200)
  })

  it('answers with one SSE event when the client accepts only text/event-stream, and 406 when it accepts neither', async () => {
    const app = await testApp({}, mcpTools)
    const sse = await app.inject({ method: 'POST', url: '/mcp', headers: { ...HEADERS, accept: 'text/event-stream' }, payload: rpc('tools/call', { name: 'echo', arguments: { text: 'x' } }) })
    expect(sse.headers['content-type']).toContain('text/event-stream')
    const data = /^event: message\ndata: (.+)\n\n$/.exec(sse.body)![1]!
    expect(JSON.parse(data).result.structuredContent).toEqual({ text: 'x', length: 1 })
    const none = await app.inject({ method: 'POST', url: '/mcp', headers: { ...HEADERS, accept: 'text/html' }, payload: rpc('ping') })
    expect(none.statusCode).toBe(406)
  })

  it('refuses an unsupported MCP-Protocol-Version with 400', async () => {
    const app = await testApp({}, mcpTools)
    const res = await app.inject({ method: 'POST', url: '/mcp', headers: { ...HEADERS, 'mcp-protocol-version': '1999-01-01' }, payload: rpc('ping') })
    expect(res.statusCode).toBe(400)
    expect(res.json().error).toMatchObject({ code: -32022, data: { requested: '1999-01-01', supported: expect.arrayContaining(['2026-07-28', '2025-11-25']) } })
  })

  it('needs the same credentials as REST: 401 without a key, 403 for tools/call without tools:call', async () => {
    const app = await testApp({}, mcpTools)
    const anonymous = await app.inject({ method: 'POST', url: '/mcp', headers: { ...HEADERS, 'x-api-key': '' }, payload: rpc('tools/list') })
    expect(anonymous.statusCode).toBe(401)
    expect(anonymous.headers['www-authenticate']).toContain('Bearer')
    const reader = await app.inject({ method: 'POST', url: '/mcp', headers: { ...HEADERS, 'x-api-key': KEYS.reader }, payload: rpc('tools/call', { name: 'echo', arguments: { text: 'x' } }) })
    expect(reader.statusCode).toBe(403)
    expect(reader.headers['www-authenticate']).toContain('insufficient_scope')
  })

  it('counts MCP calls in the same metric families with transport="mcp", leaving the REST series as they were', async () => {
    const app = await testApp({}, mcpTools)
    await app.inject({ method: 'POST', url: '/mcp', headers: HEADERS, payload: rpc('tools/call', { name: 'echo', arguments: { text: 'x' } }) })
    await app.inject({ method: 'POST', url: '/tools/echo', headers: { 'x-api-key': KEYS.caller }, payload: { text: 'x' } })
    const metrics = (await app.inject({ method: 'GET', url: '/metrics' })).body
    expect(metrics).toContain('toolgate_tool_calls_total{tool="echo",kind="read",effects="none",outcome="ok"} 1')
    expect(metrics).toContain('toolgate_tool_calls_total{tool="echo",kind="read",effects="none",transport="mcp",outcome="ok"} 1')
    expect(metrics).toMatch(/toolgate_tool_duration_seconds_count\{tool="echo",kind="read",effects="none",transport="mcp",outcome="ok"\} 1/)
  })

  it('moves the tool\'s in-flight gauge while an MCP call runs', async () => {
    const { url } = await listeningGateway()
    const controller = new AbortController()
    const call = fetch(url, { method: 'POST', headers: HEADERS, body: rpc('tools/call', { name: 'wait_for_abort', arguments: { tag: 'gauge' } }), signal: controller.signal })
    const gauge = async (): Promise<string | undefined> => /toolgate_tool_calls_in_flight\{tool="wait_for_abort"[^}]*\} (\d+)/.exec(await (await fetch(new URL('/metrics', url))).text())?.[1]
    await expect.poll(gauge, { timeout: 3000 }).toBe('1')
    controller.abort()
    await expect(call).rejects.toThrow()
    await expect.poll(gauge, { timeout: 3000 }).toBe('0')
  })

  it('aborts the tool signal when the client closes the stream', async () => {
    const { url } = await listeningGateway()
    const controller = new AbortController()
    const call = fetch(url, { method: 'POST', headers: HEADERS, body: rpc('tools/call', { name: 'wait_for_abort', arguments: { tag: 'disconnect' } }), signal: controller.signal })
    await expect.poll(() => started.includes('disconnect'), { timeout: 5000 }).toBe(true) // hang up once it runs
    controller.abort()
    await expect(call).rejects.toThrow()
    await expect.poll(() => aborted.includes('disconnect'), { timeout: 3000 }).toBe(true)
  })
})
