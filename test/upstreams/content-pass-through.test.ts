import { type Client } from '@modelcontextprotocol/sdk/client/index.js'
import { z } from 'zod'
import type { FastifyInstance } from 'fastify'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { buildApp } from '../../plugins/app.js'
import { defineTool, withContent, type AnyTool } from '../../src/index.js'
import { loadConfig } from '../../src/services/config.js'
import { API_KEYS, auth, KEYS } from '../http/helpers.js'
import { modernClient, sdkClient } from '../mcp/helpers.js'
import { SLOW } from '../slow.js'
import { directEverything, EVERYTHING_SERVER, upstreamsFile } from './helpers.js'

/*
 * Over MCP, an upstream tool's result is its own content blocks and structured content, as its
 * server sent them (an image reaches the client as an image, byte for byte); REST keeps its
 * documented JSON. A local tool answers blocks with `withContent`.
 */

const PNG = 'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8DwHwAFBQIAX8jx0gAAAABJRU5ErkJggg=='
const chart = defineTool({
  id: 'chart', kind: 'read', description: 'Draws a chart.', isReadOnly: true, isConcurrencySafe: true, authorize () {},
  inputSchema: z.object({ points: z.number().int(), broken: z.boolean().optional() }), outputSchema: z.object({ points: z.number() }),
  execute: ({ points, broken }) => withContent({ points }, broken === true ? [{ type: 'image', mimeType: 'image/png' }] : [{ type: 'text', text: `${points} points` }, { type: 'image', data: PNG, mimeType: 'image/png', annotations: { audience: ['user'] } }]),
})

let app: FastifyInstance
let mcpUrl: URL
let direct: Client

beforeAll(async () => {
  const file = upstreamsFile({ mcpServers: { everything: EVERYTHING_SERVER } })
  app = await buildApp({ config: loadConfig({}, { apiKeys: API_KEYS, upstreamsFile: file }), tools: [chart as unknown as AnyTool] })
  const address = await app.listen({ host: '127.0.0.1', port: 0 })
  mcpUrl = new URL(`${address}/mcp`)
  direct = await directEverything()
}, SLOW.PROCESS_MS)
afterAll(async () => {
  await direct?.close()
  await app?.close()
})

describe('MCP content passes through whole', { timeout: SLOW.PROCESS_MS }, () => {
  it('get-tiny-image reaches both eras\' clients as the server sent it: text, image (byte for byte), text', async () => {
    const sent = await direct.callTool({ name: 'get-tiny-image', arguments: {} })
    expect((sent.content as Array<{ type: string }>).map(block => block.type)).toEqual(['text', 'image', 'text'])
    const legacy = await sdkClient(mcpUrl, KEYS.caller)
    const viaLegacy = await legacy.callTool({ name: 'everything_get_tiny_image', arguments: {} })
    expect(viaLegacy.content).toEqual(sent.content)
    expect(viaLegacy.isError).toBe(false)
    await legacy.close()
    const modern = await modernClient(mcpUrl, KEYS.caller)
    const viaModern = await modern.callTool({ name: 'everything_get_tiny_image', arguments: {} })
    expect(viaModern.content).toEqual(sent.content)
    await modern.close()
  })

  it('an echo is its text, not the JSON of a result; REST keeps its documented JSON answer', async () => {
    const client = await sdkClient(mcpUrl, KEYS.caller)
    const echo = await client.callTool({ name: 'everything_echo', arguments: { message: 'hi' } })
    expect(echo.content).toEqual([{ type: 'text', text: 'Echo: hi' }])
    await client.close()
    const rest = await app.inject({ method: 'POST', url: '/tools/everything_echo', headers: auth(KEYS.caller), payload: { message: 'hi' } })
    expect(rest.json()).toEqual({ content: [{ type: 'text', text: 'Echo: hi' }] })
  })

  it('a local tool answers blocks with withContent: MCP gets them and its structured output, REST its output, a replay the same blocks', async () => {
    const client = await sdkClient(mcpUrl, KEYS.caller)
    const result = await client.callTool({ name: 'chart', arguments: { points: 3 }, _meta: { 'dev.toolgate/idempotencyKey': 'chart-1' } })
    expect(result).toMatchObject({ isError: false, structuredContent: { points: 3 } })
    expect(result.content).toEqual([{ type: 'text', text: '3 points' }, { type: 'image', data: PNG, mimeType: 'image/png', annotations: { audience: ['user'] } }])
    const replay = await client.callTool({ name: 'chart', arguments: { points: 3 }, _meta: { 'dev.toolgate/idempotencyKey': 'chart-1' } })
    expect(replay._meta).toMatchObject({ 'dev.toolgate/replayed': true })
    expect(replay.content).toEqual(result.content)
    await client.close()
    const rest = await app.inject({ method: 'POST', url: '/tools/chart', headers: auth(KEYS.caller), payload: { points: 3 } })
    expect(rest.json()).toEqual({ points: 3 })
  })

  it('a malformed block is the tool\'s invalid output (502), on every face', async () => {
    const rest = await app.inject({ method: 'POST', url: '/tools/chart', headers: auth(KEYS.caller), payload: { points: 1, broken: true } })
    expect(rest.statusCode).toBe(502)
    expect(rest.json()).toMatchObject({ code: 'TOOLGATE_INVALID_OUTPUT' })
    const client = await sdkClient(mcpUrl, KEYS.caller)
    const result = await client.callTool({ name: 'chart', arguments: { points: 1, broken: true } })
    expect(result).toMatchObject({ isError: true, _meta: { 'dev.toolgate/problem': { status: 502, code: 'TOOLGATE_INVALID_OUTPUT' } } })
    await client.close()
  })
})
