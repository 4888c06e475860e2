import type { AddressInfo } from 'node:net'
import { Client } from '@modelcontextprotocol/sdk/client/index.js'
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js'
import type { FastifyInstance } from 'fastify'
import { afterEach, describe, expect, it } from 'vitest'
import { z } from 'zod'
import { buildApp } from '../../plugins/app.js'
import { defineTool } from '../../src/index.js'
import { hashApiKey } from '../../src/services/auth/api-keys.js'
import { loadConfig } from '../../src/services/config.js'
import { modernClient } from '../mcp/helpers.js'
import { upstreamsFile } from '../upstreams/helpers.js'

/*
 * A bundle's MCP endpoint, `/mcp/{bundle}`, driven by the official SDK clients of both eras:
 * it lists the bundle's tools under its names, a call by an alias is the tool's call (with its
 * approval), and a tool outside the bundle is an unknown tool there.
 */

const KEYS = { agent: 'agent-key-0123456789', approver: 'approver-key-0123456789', outsider: 'outsider-key-0123456789' } as const
const API_KEYS = [
  { principal: 'agent', sha256: hashApiKey(KEYS.agent), scopes: ['tools:read', 'tools:call', 'support'] },
  { principal: 'approver', sha256: hashApiKey(KEYS.approver), scopes: ['tools:read', 'tools:approve'] },
  { principal: 'outsider', sha256: hashApiKey(KEYS.outsider), scopes: ['tools:read', 'tools:call'] },
]

function tools (runs: { refunds: number }): ReturnType<typeof defineTool>[] {
  return [
    defineTool({
      id: 'lookup_order', kind: 'read', description: 'Look up an order by its number.', isReadOnly: true, isConcurrencySafe: true,
      inputSchema: z.object({ order: z.string() }), outputSchema: z.object({ order: z.string(), status: z.string() }),
      authorize () {}, execute: ({ order }) => ({ order, status: 'shipped' }),
    }),
    defineTool({
      id: 'refund_order', kind: 'network', description: 'Refund an order to the card it was paid with.', effects: ['financial', 'irreversible'],
      isReadOnly: false, isConcurrencySafe: false, requiresApproval: true,
      inputSchema: z.object({ order: z.string() }), outputSchema: z.object({ refunded: z.string() }),
      authorize () {}, execute: ({ order }) => { runs.refunds++; return { refunded: order } },
    }),
    defineTool({
      id: 'drop_database', kind: 'write', description: 'Drop a database.', effects: ['irreversible'], isReadOnly: false, isConcurrencySafe: false,
      inputSchema: z.object({}), outputSchema: z.object({ ok: z.boolean() }), authorize () {}, execute: () => ({ ok: true }),
    }),
  ]
}

const BUNDLES = {
  support: {
    description: 'What a support agent needs.',
    tools: ['lookup_order', 'refund_*'],
    aliases: { refund_order: { name: 'refund', description: 'Give a customer their money back for an order.' } },
    allow: '"support" in principal.scopes',
  },
  triage: { description: 'Support, found by search.', tools: ['lookup_order', 'refund_order'], aliases: { refund_order: { name: 'refund', description: 'Give a customer their money back for an order.' } }, discovery: true },
}

const open: FastifyInstance[] = []
afterEach(async () => { await Promise.all(open.splice(0).map(app => app.close())) })

async function gateway (): Promise<{ base: URL, runs: { refunds: number } }> {
  const runs = { refunds: 0 }
  const app = await buildApp({ config: loadConfig({}, { apiKeys: API_KEYS, upstreamsFile: upstreamsFile({ bundles: BUNDLES }), mcpApprovalWaitMs: 1_000 }), tools: tools(runs) })
  open.push(app)
  await app.listen({ host: '127.0.0.1', port: 0 })
  const { port } = app.server.address() as AddressInfo
  return { base: new URL(`http://127.0.0.1:${port}`), runs }
}

async function legacyClient (url: URL, key: string): Promise<Client> {
  const client = new Client({ name: 'bundle-test', version: '1.0.0' })
  await client.connect(new StreamableHTTPClientTransport(url, { requestInit: { headers: { 'x-api-key': key } } }))
  return client
}

async function approveFirstPending (base: URL): Promise<string> {
  let ids: string[] = []
  while (ids.length === 0) {
    const res = await fetch(new URL('/approvals', base), { headers: { 'x-api-key': KEYS.approver } })
    ids = (await res.json() as { approvals: Array<{ id: string }> }).approvals.map(approval => approval.id)
  }
  const decided = await fetch(new URL(`/approvals/${ids[0]!}/approve`, base), { method: 'POST', headers: { 'x-api-key': KEYS.approver, 'content-type': 'application/json' }, body: '{}' })
  expect(decided.status).toBe(200)
  return ids[0]!
}

describe('/mcp/{bundle} with the official SDK clients', () => {
  it('1.x (2025-11-25): lists the bundle under its names, calls by alias, approval by id, refuses a tool outside it', async () => {
    const { base, runs } = await gateway()
    const client = await legacyClient(new URL('/mcp/support', base), KEYS.agent)
    const { tools: listed } = await client.listTools()
    expect(listed.map(tool => tool.name).sort()).toEqual(['lookup_order', 'refund'])
    expect(listed.find(tool => tool.name === 'refund')).toMatchObject({ description: 'Give a customer their money back for an order.', annotations: { destructiveHint: true }, _meta: { 'dev.toolgate/declaration': { id: 'refund_order' } } })
    expect(await client.callTool({ name: 'lookup_order', arguments: { order: 'A1' } })).toMatchObject({ isError: false, structuredContent: { order: 'A1', status: 'shipped' } })
    const asked = await client.callTool({ name: 'refund', arguments: { order: 'A1' } })
    expect(asked).toMatchObject({ isError: true, _meta: { 'dev.toolgate/approval': { status: 'pending', tool: 'refund_order' } } })
    const id = await approveFirstPending(base)
    expect(await client.callTool({ name: 'refund', arguments: { order: 'A1' }, _meta: { 'dev.toolgate/approvalId': id } })).toMatchObject({ isError: false, structuredContent: { refunded: 'A1' } })
    expect(runs.refunds).toBe(1)
    // Outside the bundle (and under its own id, an aliased tool): unknown here, as a typo.
    await expect(client.callTool({ name: 'drop_database', arguments: {} })).rejects.toThrow(/unknown tool: drop_database/)
    await expect(client.callTool({ name: 'refund_order', arguments: { order: 'A1' } })).rejects.toThrow(/unknown tool: refund_order/)
    await client.close()
  })

  it('2.x (2026-07-28): the client follows the approval of a call by alias by itself', async () => {
    const { base, runs } = await gateway()
    const client = await modernClient(new URL('/mcp/support', base), KEYS.agent)
    expect((await client.listTools()).tools.map(tool => tool.name).sort()).toEqual(['lookup_order', 'refund'])
    const called = client.callTool({ name: 'refund', arguments: { order: 'B2' } })
    await approveFirstPending(base)
    expect(await called).toMatchObject({ isError: false, structuredContent: { refunded: 'B2' } })
    expect(runs.refunds).toBe(1)
    await client.close()
  })

  it('a bundle in discovery mode: search finds its tools under its names, nothing outside it; call_tool is the call', async () => {
    const { base, runs } = await gateway()
    const client = await legacyClient(new URL('/mcp/triage', base), KEYS.agent)
    expect((await client.listTools()).tools.map(tool => tool.name)).toEqual(['search_tools', 'describe_tool', 'call_tool'])
    const found = await client.callTool({ name: 'search_tools', arguments: { query: 'money back for an order' } })
    const names = (found.structuredContent as { tools: Array<{ name: string }> }).tools.map(tool => tool.name)
    expect(names[0]).toBe('refund')
    expect(names).not.toContain('drop_database')
    expect((await client.callTool({ name: 'search_tools', arguments: { query: 'drop database' } })).structuredContent).toEqual({ tools: [] })
    expect(await client.callTool({ name: 'describe_tool', arguments: { name: 'drop_database' } })).toMatchObject({ isError: true, _meta: { 'dev.toolgate/problem': { status: 404 } } })
    expect(await client.callTool({ name: 'call_tool', arguments: { name: 'refund', arguments: { order: 'C3' } } })).toMatchObject({ isError: true, _meta: { 'dev.toolgate/approval': { status: 'pending', tool: 'refund_order' } } })
    expect(runs.refunds).toBe(0)
    expect(await client.callTool({ name: 'search_tools', arguments: { query: '' } })).toMatchObject({ isError: true, _meta: { 'dev.toolgate/problem': { status: 400, code: 'TOOLGATE_INVALID_INPUT' } } })
    await client.close()
  })

  it('answers 404 with a stable code for an unknown bundle and for one the caller may not use', async () => {
    const { base } = await gateway()
    for (const [path, key] of [['/mcp/nope', KEYS.agent], ['/mcp/support', KEYS.outsider]] as const) {
      const res = await fetch(new URL(path, base), { method: 'POST', headers: { 'x-api-key': key, 'content-type': 'application/json', accept: 'application/json, text/event-stream' }, body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list', params: {} }) })
      expect(res.status).toBe(404)
      expect(await res.json()).toMatchObject({ status: 404, code: 'TOOLGATE_BUNDLE_NOT_FOUND' })
    }
    await expect(legacyClient(new URL('/mcp/support', base), KEYS.outsider)).rejects.toThrow(/404/)
  })
})
