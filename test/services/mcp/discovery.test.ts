/**
 * Discovery mode in the protocol, without a transport: three tools listed, search and describe
 * over what the caller may see, and `call_tool` as the very call a direct `tools/call` makes.
 */
import { describe, expect, it } from 'vitest'
import { z } from 'zod'
import { defineTool, defineToolCatalog, type AnyTool } from '../../../src/index.js'
import { ownNameOf, ownNamesOf } from '../../../src/core/bundles/named-tool.js'
import { McpProtocol, type McpCaller } from '../../../src/services/mcp/protocol.js'
import { mcpToolOf } from '../../../src/services/mcp/tool-spec.js'

const runs: string[] = []

function declare (id: string, description: string, extra: { effects?: ['financial'], resolve?: true } = {}): AnyTool {
  return defineTool({
    id, kind: 'write', description, isReadOnly: false, isConcurrencySafe: false, authorize () {}, effects: extra.effects ?? [],
    inputSchema: z.object({ amount: z.number().int() }), outputSchema: z.object({ done: z.string() }),
    execute: ({ amount }) => { runs.push(id); return { done: `${id} ${amount}` } },
    ...(extra.resolve === true ? { resolve: ({ amount }: { amount: number }) => ({ would: amount }) } : {}),
  }) as AnyTool
}

const tools = [
  declare('refund_payment', 'Give a card payment back to the customer.', { effects: ['financial'], resolve: true }),
  declare('rotate_secret', 'Replace an API secret with a fresh one.'),
  declare('delete_database', 'Drop a whole database and its backups.'),
]
const catalog = defineToolCatalog(tools)
const protocol = new McpProtocol({ name: 'test', version: '0', defaultTimeoutMs: 1_000 })

/** A caller who may not see `delete_database`. */
function caller (discovery = true): McpCaller {
  const invoker = catalog.bind({ app: undefined, isPermitted: tool => tool.id !== 'delete_database' })
  return {
    principalId: 'p',
    discovery,
    tools: () => catalog.tools.filter(tool => tool.id !== 'delete_database').map(ownNameOf),
    all: () => ownNamesOf(catalog.tools),
    get: name => { const tool = catalog.get(name); return tool === undefined ? undefined : ownNameOf(tool) },
    invoke: async (toolId, input, options) => await invoker.invoke({ ...options, toolId, input }),
    problemOf: error => ({ status: error.status, code: error.code, detail: error.message, ...error.extensions }),
  }
}

async function call (name: string, args: unknown, meta?: Record<string, unknown>, discovery = true): Promise<Record<string, any>> {
  return JSON.parse(await protocol.callTool({ name, arguments: args, ...(meta === undefined ? {} : { _meta: meta }) }, caller(discovery)))
}

describe('discovery mode', () => {
  it('lists three tools, the same for every caller, and every tool when off', () => {
    expect(JSON.parse(protocol.listTools(caller())).tools.map((tool: { name: string }) => tool.name)).toEqual(['search_tools', 'describe_tool', 'call_tool'])
    expect(JSON.parse(protocol.listTools(caller(false))).tools).toHaveLength(2)
  })

  it('finds a tool by words, with its one line, effects and whether it only reads', async () => {
    const result = await call('search_tools', { query: 'give a payment back', limit: 1 })
    expect(result.isError).toBe(false)
    expect(result.structuredContent).toEqual({ tools: [{ name: 'refund_payment', description: 'Give a card payment back to the customer.', effects: ['financial'], readOnly: false }] })
    expect(JSON.parse(result.content[0].text)).toEqual(result.structuredContent)
  })

  it('never finds a tool the caller may not see, and describes it as one that does not exist', async () => {
    expect((await call('search_tools', { query: 'drop database backups' })).structuredContent.tools.map((tool: { name: string }) => tool.name)).not.toContain('delete_database')
    const hidden = await call('describe_tool', { name: 'delete_database' })
    const missing = await call('describe_tool', { name: 'no_such_tool' })
    expect(hidden._meta['dev.toolgate/problem']).toEqual({ ...missing._meta['dev.toolgate/problem'], detail: 'no tool "delete_database"' })
    expect(hidden._meta['dev.toolgate/problem']).toMatchObject({ status: 404, code: 'TOOLGATE_NOT_FOUND' })
  })

  it('describes a tool with its whole tools/list entry', async () => {
    const result = await call('describe_tool', { name: 'rotate_secret' })
    expect(result.structuredContent).toEqual(JSON.parse(JSON.stringify(mcpToolOf(tools[1]!, 1_000))))
  })

  it('runs call_tool as the direct call, and still takes a direct call of a tool by its name', async () => {
    runs.length = 0
    const through = await call('call_tool', { name: 'rotate_secret', arguments: { amount: 2 } })
    const direct = await call('rotate_secret', { amount: 2 })
    expect(through).toEqual(direct)
    expect(through.structuredContent).toEqual({ done: 'rotate_secret 2' })
    expect(runs).toEqual(['rotate_secret', 'rotate_secret'])
  })

  it('keeps the call options of _meta through call_tool: a dry run runs nothing', async () => {
    runs.length = 0
    const result = await call('call_tool', { name: 'refund_payment', arguments: { amount: 5 } }, { 'dev.toolgate/dryRun': true })
    expect(result._meta).toMatchObject({ 'dev.toolgate/dryRun': true, 'dev.toolgate/proposal': { would: 5 } })
    expect(runs).toEqual([])
  })

  it('answers a tool\'s bad input through call_tool as the direct call does', async () => {
    const through = await call('call_tool', { name: 'rotate_secret', arguments: { amount: 'two' } })
    expect(through).toEqual(await call('rotate_secret', { amount: 'two' }))
    expect(through._meta['dev.toolgate/problem']).toMatchObject({ status: 400, code: 'TOOLGATE_INVALID_INPUT' })
  })

  it('answers a call of a hidden tool through call_tool as the direct call does', async () => {
    runs.length = 0
    const through = await call('call_tool', { name: 'delete_database', arguments: { amount: 1 } })
    expect(through).toEqual(await call('delete_database', { amount: 1 }))
    expect(through.isError).toBe(true)
    expect(runs).toEqual([])
  })

  it.each([
    ['an empty query', 'search_tools', { query: ' ' }, '/query'],
    ['a query of 33 words', 'search_tools', { query: 'word '.repeat(33) }, '/query'],
    ['a limit of 0', 'search_tools', { query: 'refund', limit: 0 }, '/limit'],
    ['an unknown argument', 'search_tools', { querry: 'refund' }, '/querry'],
    ['a describe without a name', 'describe_tool', {}, '/name'],
    ['arguments that are not an object', 'call_tool', { name: 'rotate_secret', arguments: [1] }, '/arguments'],
    ['arguments of the discovery tool that are not an object', 'search_tools', 'refund', ''],
  ])('answers %s with the 400 REST would, as a result the model reads', async (_, name, args, pointer) => {
    const result = await call(name, args)
    expect(result.isError).toBe(true)
    expect(result._meta['dev.toolgate/problem']).toMatchObject({ status: 400, code: 'TOOLGATE_INVALID_INPUT', errors: [expect.objectContaining({ pointer })] })
  })

  it('answers call_tool of an unknown tool with REST\'s 404, as a result', async () => {
    const result = await call('call_tool', { name: 'no_such_tool' })
    expect(result._meta['dev.toolgate/problem']).toMatchObject({ status: 404, code: 'TOOLGATE_NOT_FOUND', detail: 'no tool "no_such_tool"' })
  })

  it('serves the discovery tools only in discovery mode', async () => {
    await expect(call('search_tools', { query: 'refund' }, undefined, false)).rejects.toThrow('unknown tool: search_tools')
  })
})
