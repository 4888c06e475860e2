/**
 * Discovery mode over `POST /mcp` (MCP_DISCOVERY=on), driven by clients nobody here wrote: the
 * official SDK (1.x, and 2.x on revision 2026-07-28 for an approval), and the Vercel AI SDK
 * finding and calling a tool its listing never showed it.
 */
import type { AddressInfo } from 'node:net'
import { createMCPClient } from '@ai-sdk/mcp'
import { describe, expect, it } from 'vitest'
import { z } from 'zod'
import { defineTool } from '../../src/index.js'
import { hashApiKey } from '../../src/services/auth/api-keys.js'
import { API_KEYS, auth, KEYS, testApp } from '../http/helpers.js'
import { mcpTools, modernClient, sdkClient } from './helpers.js'

const APPROVER = 'approver-key-0123456789'
const runs = { transfer: 0 }
const transfer = defineTool({
  id: 'transfer', kind: 'network', description: 'Move money from one ledger account to another.', isReadOnly: false, isConcurrencySafe: false,
  effects: ['financial'], authorize () {},
  inputSchema: z.object({ cents: z.number().int().positive() }), outputSchema: z.object({ sent: z.number() }),
  execute: ({ cents }) => { runs.transfer++; return { sent: cents } },
})

/** A listening gateway in discovery mode where `caller` may not call `pay_out`, and `transfer` waits for approval. */
async function discoveryGateway (): Promise<URL> {
  const app = await testApp({
    mcpDiscovery: 'on',
    apiKeys: [...API_KEYS, { principal: 'approver', sha256: hashApiKey(APPROVER), scopes: ['tools:read', 'tools:approve'] }],
    rules: [{ principal: 'caller', allow: ['*'], deny: ['pay_*'] }, { principal: 'admin', allow: ['*'], deny: [] }],
    approvalRules: [{ tools: ['transfer'] }],
    mcpApprovalWaitMs: 1_000,
  }, [...mcpTools, transfer])
  await app.listen({ host: '127.0.0.1', port: 0 })
  return new URL(`http://127.0.0.1:${(app.server.address() as AddressInfo).port}/mcp`)
}

type Found = { structuredContent: { tools: Array<{ name: string }> } }
const namesOf = (result: unknown): string[] => (result as Found).structuredContent.tools.map(tool => tool.name)

describe('MCP discovery mode over HTTP', () => {
  it('lists three tools; search finds a tool, describe gives its schema, call_tool runs it (SDK 1.x)', async () => {
    const client = await sdkClient(await discoveryGateway())
    expect((await client.listTools()).tools.map(tool => tool.name)).toEqual(['search_tools', 'describe_tool', 'call_tool'])
    expect(namesOf(await client.callTool({ name: 'search_tools', arguments: { query: 'echo text back', limit: 3 } }))[0]).toBe('echo')
    const described = await client.callTool({ name: 'describe_tool', arguments: { name: 'echo' } })
    expect(described.structuredContent).toMatchObject({ name: 'echo', inputSchema: { type: 'object', properties: { text: { type: 'string' } } } })
    const called = await client.callTool({ name: 'call_tool', arguments: { name: 'echo', arguments: { text: 'hi' } } })
    expect(called).toMatchObject({ isError: false, structuredContent: { text: 'hi' } })
    // The same call, made directly by the tool's name, still works.
    expect(await client.callTool({ name: 'echo', arguments: { text: 'hi' } })).toEqual(called)
    await client.close()
  })

  it('never finds a tool the caller may not call, and describes it as a missing one', async () => {
    const url = await discoveryGateway()
    const caller = await sdkClient(url)
    const admin = await sdkClient(url, KEYS.admin)
    const query = { query: 'send money to an outside account' }
    expect(namesOf(await admin.callTool({ name: 'search_tools', arguments: query }))).toContain('pay_out')
    expect(namesOf(await caller.callTool({ name: 'search_tools', arguments: query }))).not.toContain('pay_out')
    const hidden = await caller.callTool({ name: 'describe_tool', arguments: { name: 'pay_out' } })
    const missing = await caller.callTool({ name: 'describe_tool', arguments: { name: 'pay_outt' } })
    expect(hidden).toMatchObject({ isError: true, _meta: { 'dev.toolgate/problem': { status: 404, code: 'TOOLGATE_NOT_FOUND', detail: 'no tool "pay_out"' } } })
    expect(missing).toMatchObject({ isError: true, _meta: { 'dev.toolgate/problem': { status: 404, code: 'TOOLGATE_NOT_FOUND', detail: 'no tool "pay_outt"' } } })
    await caller.close()
    await admin.close()
  })

  it('answers an empty or hostile query with a 400 problem the model reads', async () => {
    const client = await sdkClient(await discoveryGateway())
    for (const query of ['', 'x'.repeat(300), 'a\u0007b']) {
      const result = await client.callTool({ name: 'search_tools', arguments: { query } })
      expect(result).toMatchObject({ isError: true, _meta: { 'dev.toolgate/problem': { status: 400, code: 'TOOLGATE_INVALID_INPUT', errors: [{ pointer: '/query' }] } } })
    }
    await client.close()
  })

  it('runs an approval through call_tool: the 2026-07-28 client retries call_tool by itself, and the approved call runs once', async () => {
    const url = await discoveryGateway()
    const client = await modernClient(url)
    runs.transfer = 0
    const called = client.callTool({ name: 'call_tool', arguments: { name: 'transfer', arguments: { cents: 500 } } })
    let ids: string[] = []
    while (ids.length === 0) {
      const res = await fetch(new URL('/approvals', url), { headers: auth(APPROVER) })
      ids = (await res.json() as { approvals: Array<{ id: string }> }).approvals.map(approval => approval.id)
    }
    expect(runs.transfer).toBe(0)
    const decided = await fetch(new URL(`/approvals/${ids[0]!}/approve`, url), { method: 'POST', headers: { ...auth(APPROVER), 'content-type': 'application/json' }, body: '{}' })
    expect(decided.status).toBe(200)
    expect(await called).toMatchObject({ isError: false, structuredContent: { sent: 500 } })
    expect(runs.transfer).toBe(1)
    await client.close()
  })

  it('the Vercel AI SDK finds a tool it was not listed, by search, and calls it', async () => {
    const url = await discoveryGateway()
    const client = await createMCPClient({ transport: { type: 'http', url: url.href, headers: { 'x-api-key': KEYS.caller } } })
    try {
      const tools = await client.tools()
      expect(Object.keys(tools).sort()).toEqual(['call_tool', 'describe_tool', 'search_tools'])
      const options = { toolCallId: 'call-1', messages: [] }
      const found = await tools.search_tools!.execute!({ query: 'echo the text back' }, options) as { structuredContent: { tools: Array<{ name: string }> } }
      const name = found.structuredContent.tools[0]!.name
      expect(name).toBe('echo')
      expect(tools[name]).toBeUndefined()
      const result = await tools.call_tool!.execute!({ name, arguments: { text: 'found you' } }, options) as { isError: boolean, structuredContent: unknown }
      expect(result).toMatchObject({ isError: false, structuredContent: { text: 'found you' } })
    } finally {
      await client.close()
    }
  })
})
