import { describe, expect, it } from 'vitest'
import { auth, KEYS, testApp } from '../http/helpers.js'
import { listeningGateway, mcpTools, modernClient } from './helpers.js'

const ENVELOPE = {
  'io.modelcontextprotocol/protocolVersion': '2026-07-28',
  'io.modelcontextprotocol/clientInfo': { name: 'raw', version: '1' },
  'io.modelcontextprotocol/clientCapabilities': {},
}
const HEADERS = { 'content-type': 'application/json', accept: 'application/json, text/event-stream', ...auth(KEYS.caller), 'mcp-protocol-version': '2026-07-28' }
const call = (name: string, args: Record<string, unknown>): string =>
  JSON.stringify({ jsonrpc: '2.0', id: 5, method: 'tools/call', params: { name, arguments: args, _meta: ENVELOPE } })

describe('POST /mcp, revision 2026-07-28, with the 2.x client (@modelcontextprotocol/client)', () => {
  it('negotiates 2026-07-28 through server/discover, lists and calls tools statelessly', async () => {
    const { url } = await listeningGateway()
    const client = await modernClient(url)
    expect(client.getNegotiatedProtocolVersion()).toBe('2026-07-28')
    const { tools } = await client.listTools()
    expect(tools.find(tool => tool.name === 'slow_write')!.annotations).toMatchObject({ destructiveHint: true, readOnlyHint: false })
    const result = await client.callTool({ name: 'echo', arguments: { text: 'modern' } })
    expect(result.structuredContent).toEqual({ text: 'modern', length: 6 })
    const failed = await client.callTool({ name: 'refuse', arguments: {} })
    expect(failed).toMatchObject({ isError: true, _meta: { 'dev.toolgate/problem': { status: 409 } } })
    await client.close()
  })

  it('answers server/discover with the revisions, capabilities, resultType and cache hints', async () => {
    const app = await testApp({}, mcpTools)
    const res = await app.inject({ method: 'POST', url: '/mcp', headers: { ...HEADERS, 'mcp-method': 'server/discover' }, payload: { jsonrpc: '2.0', id: 1, method: 'server/discover', params: { _meta: ENVELOPE } } })
    expect(res.statusCode).toBe(200)
    expect(res.json().result).toMatchObject({ resultType: 'complete', supportedVersions: ['2026-07-28', '2025-11-25', '2025-06-18', '2025-03-26', '2024-11-05'], capabilities: { tools: {} }, ttlMs: 0, cacheScope: 'public' })
  })

  it('marks tools/list cacheable by this caller only', async () => {
    const app = await testApp({}, mcpTools)
    const res = await app.inject({ method: 'POST', url: '/mcp', headers: { ...HEADERS, 'mcp-method': 'tools/list' }, payload: { jsonrpc: '2.0', id: 1, method: 'tools/list', params: { _meta: ENVELOPE } } })
    expect(res.json().result).toMatchObject({ resultType: 'complete', ttlMs: 0, cacheScope: 'private' })
  })

  it('requires Mcp-Method and Mcp-Name and checks them against the body (400, -32020)', async () => {
    const app = await testApp({}, mcpTools)
    const post = async (headers: Record<string, string>): Promise<{ status: number, code: number }> => {
      const res = await app.inject({ method: 'POST', url: '/mcp', headers: { ...HEADERS, ...headers }, payload: call('echo', { text: 'x' }) })
      return { status: res.statusCode, code: res.json().error?.code }
    }
    expect(await post({})).toEqual({ status: 400, code: -32020 })
    expect(await post({ 'mcp-method': 'tools/call' })).toEqual({ status: 400, code: -32020 })
    expect(await post({ 'mcp-method': 'tools/list', 'mcp-name': 'echo' })).toEqual({ status: 400, code: -32020 })
    expect(await post({ 'mcp-method': 'tools/call', 'mcp-name': 'hang' })).toEqual({ status: 400, code: -32020 })
    expect(await post({ 'mcp-method': 'tools/call', 'mcp-name': '=?base64?ZWNobw==?=' })).toMatchObject({ status: 200 })
    expect(await post({ 'mcp-method': 'tools/call', 'mcp-name': 'echo' })).toMatchObject({ status: 200 })
  })

  it('answers an unknown method with 404, initialize included, and an unsupported revision with -32022', async () => {
    const app = await testApp({}, mcpTools)
    const init = await app.inject({ method: 'POST', url: '/mcp', headers: { ...HEADERS, 'mcp-method': 'initialize' }, payload: { jsonrpc: '2.0', id: 1, method: 'initialize', params: { _meta: ENVELOPE } } })
    expect(init.statusCode).toBe(404)
    expect(init.json().error.code).toBe(-32601)
    const future = { ...ENVELOPE, 'io.modelcontextprotocol/protocolVersion': '2099-01-01' }
    const res = await app.inject({ method: 'POST', url: '/mcp', headers: { ...HEADERS, 'mcp-protocol-version': '2099-01-01', 'mcp-method': 'ping' }, payload: { jsonrpc: '2.0', id: 1, method: 'ping', params: { _meta: future } } })
    expect(res.statusCode).toBe(400)
    expect(res.json().error).toMatchObject({ code: -32022, data: { requested: '2099-01-01' } })
  })

  it('refuses a 2026-07-28 header on a request without the envelope (400)', async () => {
    const app = await testApp({}, mcpTools)
    const res = await app.inject({ method: 'POST', url: '/mcp', headers: { ...HEADERS, 'mcp-method': 'tools/list' }, payload: { jsonrpc: '2.0', id: 1, method: 'tools/list', params: {} } })
    expect(res.statusCode).toBe(400)
    expect(res.json().error.code).toBe(-32602)
  })
})
