import { writeFileSync } from 'node:fs'
import type { FastifyInstance } from 'fastify'
import { afterEach, describe, expect, it } from 'vitest'
import { z } from 'zod'
import { buildApp } from '../../plugins/app.js'
import { defineTool, type AnyTool } from '../../src/index.js'
import { hashApiKey } from '../../src/services/auth/api-keys.js'
import { loadConfig } from '../../src/services/config.js'
import { MemoryLedgerStore } from '../../tools/ledger/store.js'
import { createLedgerTools } from '../../tools/ledger.js'
import { upstreamsFile } from '../upstreams/helpers.js'
import { expectProblem } from '../http/problem-shape.js'

/*
 * A bundle over REST: its listing, exports, document and calls are the whole catalog's, over
 * the bundle's tools under the bundle's names; outside it, a tool is unknown.
 */

const KEYS = { agent: 'agent-key-0123456789', ops: 'ops-key-0123456789', approver: 'approver-key-0123456789' } as const
const API_KEYS = [
  { principal: 'agent', sha256: hashApiKey(KEYS.agent), scopes: ['tools:read', 'tools:call', 'ledger:transfer'] },
  { principal: 'ops', sha256: hashApiKey(KEYS.ops), scopes: ['tools:read', 'tools:call', 'ops'] },
  { principal: 'approver', sha256: hashApiKey(KEYS.approver), scopes: ['tools:read', 'tools:call', 'tools:approve'] },
]

const echo = defineTool({
  id: 'echo', kind: 'read', description: 'Echo the text back.', isReadOnly: true, isConcurrencySafe: true,
  inputSchema: z.object({ text: z.string() }), outputSchema: z.object({ text: z.string() }),
  authorize () {}, execute: ({ text }) => ({ text }),
})
const reboot = defineTool({
  id: 'reboot_host', kind: 'write', description: 'Reboot a host.', effects: ['irreversible'], isReadOnly: false, isConcurrencySafe: false,
  inputSchema: z.object({ host: z.string() }), outputSchema: z.object({ ok: z.boolean() }),
  authorize () {}, execute: () => ({ ok: true }),
})

const BUNDLES = {
  money: {
    description: 'Move and read money.',
    tools: ['ledger_*', 'echo'],
    aliases: { ledger_transfer: { name: 'pay', description: 'Pay someone from an account.' } },
  },
  ops: { description: 'Operate hosts.', tools: ['reboot_host'], scopes: ['ops'] },
}

const open: FastifyInstance[] = []
afterEach(async () => { await Promise.all(open.splice(0).map(app => app.close())) })

async function gateway (bundles: Record<string, unknown> = BUNDLES, tools: readonly AnyTool[] = [echo, reboot, ...createLedgerTools(new MemoryLedgerStore({ alice: 10_000, bob: 0 }), { dailyBudgetCents: 1_000 })]): Promise<{ app: FastifyInstance, file: string }> {
  const file = upstreamsFile({ bundles })
  const app = await buildApp({ config: loadConfig({}, { apiKeys: API_KEYS, upstreamsFile: file }), tools })
  open.push(app)
  return { app, file }
}

const as = (key: string): Record<string, string> => ({ 'x-api-key': key })

describe('a bundle over REST', () => {
  it('lists the bundles a caller may use, each with its addresses', async () => {
    const { app } = await gateway()
    const agent = await app.inject({ method: 'GET', url: '/bundles', headers: as(KEYS.agent) })
    expect(agent.json()).toEqual({ bundles: [{ name: 'money', description: 'Move and read money.', discovery: false, tools: 3, mcp: '/mcp/money', openapi: '/bundles/money/openapi.json' }] })
    const ops = await app.inject({ method: 'GET', url: '/bundles', headers: as(KEYS.ops) })
    expect(ops.json<{ bundles: Array<{ name: string }> }>().bundles.map(bundle => bundle.name)).toEqual(['money', 'ops'])
  })

  it('lists its tools under its names, and exports them for a model', async () => {
    const { app } = await gateway()
    const listing = await app.inject({ method: 'GET', url: '/bundles/money/tools', headers: as(KEYS.agent) })
    const tools = listing.json<{ tools: Array<{ id: string, name?: string, description: string }> }>().tools
    expect(tools.map(tool => [tool.id, tool.name])).toEqual([['echo', undefined], ['ledger_transfer', 'pay'], ['ledger_balance', undefined]].sort((a, b) => tools.findIndex(t => t.id === a[0]) - tools.findIndex(t => t.id === b[0])))
    expect(tools.find(tool => tool.id === 'ledger_transfer')!.description).toBe('Pay someone from an account.')
    const openai = await app.inject({ method: 'GET', url: '/bundles/money/tools?format=openai', headers: as(KEYS.agent) })
    const names = openai.json<{ tools: Array<{ function: { name: string, description: string } }> }>().tools.map(tool => tool.function.name)
    expect(names.sort()).toEqual(['echo', 'ledger_balance', 'pay'])
    const one = await app.inject({ method: 'GET', url: '/bundles/money/tools/pay', headers: as(KEYS.agent) })
    expect(one.json()).toMatchObject({ id: 'ledger_transfer', name: 'pay' })
    // Search covers the bundle's tools under its names and descriptions.
    const found = await app.inject({ method: 'GET', url: '/bundles/money/tools?q=pay%20someone&limit=1', headers: as(KEYS.agent) })
    expect(found.json<{ tools: Array<{ name?: string }> }>().tools.map(tool => tool.name)).toEqual(['pay'])
  })

  it('calls a tool by its name in the bundle: the same call, its limits and approvals, the bundle in its metrics', async () => {
    const { app } = await gateway()
    const pay = (amount: number, key: string, headers: Record<string, string> = {}) => app.inject({ method: 'POST', url: '/bundles/money/tools/pay', payload: { from: 'alice', to: 'bob', amount }, headers: { ...as(KEYS.agent), 'idempotency-key': key, ...headers } })
    const first = await pay(600, 'a')
    expect(first.statusCode).toBe(200)
    expect(first.headers['ratelimit-policy']).toBe('"ledger_transfer.daily";q=1000;w=86400;qu="amount"')
    const asked = await pay(500, 'b')
    expect(asked.statusCode).toBe(202)
    const { id } = asked.json<{ id: string }>()
    expect((await app.inject({ method: 'POST', url: `/approvals/${id}/approve`, headers: as(KEYS.approver) })).statusCode).toBe(200)
    expect((await pay(500, 'b', { 'approval-id': id })).statusCode).toBe(200)
    // Idempotency is the tool's, whichever address: the same key at /tools replays.
    const direct = await app.inject({ method: 'POST', url: '/tools/ledger_transfer', payload: { from: 'alice', to: 'bob', amount: 600 }, headers: { ...as(KEYS.agent), 'idempotency-key': 'a' } })
    expect(direct.headers['idempotent-replayed']).toBe('true')
    const metrics = (await app.inject({ method: 'GET', url: '/metrics' })).body
    expect(metrics).toMatch(/toolgate_tool_calls_total\{tool="ledger_transfer",[^}]*bundle="money",outcome="ok"\} 2/)
  })

  it('answers 404 for a tool outside the bundle, an unknown bundle, and one the caller may not use', async () => {
    const { app } = await gateway()
    const outside = await app.inject({ method: 'POST', url: '/bundles/money/tools/reboot_host', payload: { host: 'a' }, headers: as(KEYS.ops) })
    expectProblem(outside, 404, 'TOOLGATE_NOT_FOUND')
    // Under its own id an aliased tool is not in the bundle: only its name there is.
    expectProblem(await app.inject({ method: 'POST', url: '/bundles/money/tools/ledger_transfer', payload: {}, headers: as(KEYS.agent) }), 404, 'TOOLGATE_NOT_FOUND')
    expectProblem(await app.inject({ method: 'GET', url: '/bundles/nope/tools', headers: as(KEYS.agent) }), 404, 'TOOLGATE_BUNDLE_NOT_FOUND')
    const hidden = await app.inject({ method: 'POST', url: '/bundles/ops/tools/reboot_host', payload: { host: 'a' }, headers: as(KEYS.agent) })
    expectProblem(hidden, 404, 'TOOLGATE_BUNDLE_NOT_FOUND')
    expect((await app.inject({ method: 'POST', url: '/bundles/ops/tools/reboot_host', payload: { host: 'a' }, headers: as(KEYS.ops) })).statusCode).toBe(200)
  })

  it('serves its own OpenAPI document: its operations at its paths, under its names', async () => {
    const { app } = await gateway()
    const document = (await app.inject({ method: 'GET', url: '/bundles/money/openapi.json', headers: as(KEYS.agent) })).json<{ info: { title: string }, paths: Record<string, { post: { operationId: string, description: string } }> }>()
    expect(Object.keys(document.paths).sort()).toEqual(['/bundles/money/tools/echo', '/bundles/money/tools/ledger_balance', '/bundles/money/tools/pay'])
    expect(document.paths['/bundles/money/tools/pay']!.post).toMatchObject({ operationId: 'pay', 'x-tool': 'ledger_transfer' })
    expect(document.paths['/bundles/money/tools/pay']!.post.description).toMatch(/^Pay someone from an account\.\n\n\*\*Effects: /)
    expect(document.info.title).toContain('money')
  })
})

describe('bad bundles', () => {
  const refused = async (bundles: Record<string, unknown>, message: RegExp): Promise<void> => {
    await expect(gateway(bundles)).rejects.toThrow(message)
  }
  it('refuses a name that is not a path segment, a glob that matches nothing, and an alias that collides', async () => {
    await refused({ 'Bad/Name': { description: 'x', tools: ['echo'] } }, /bundles\.Bad\/Name: not a bundle name/)
    await refused({ a: { description: 'x', tools: ['nothing_*'] } }, /bundles\.a\.tools\[0\]: "nothing_\*" matches no tool/)
    await refused({ a: { description: 'x', tools: ['echo', 'reboot_host'], aliases: { reboot_host: { name: 'echo' } } } }, /bundles\.a\.aliases\.reboot_host\.name: "echo" is the name of two tools/)
    await refused({ a: { description: 'x', tools: ['echo'], aliases: { reboot_host: { name: 'r' } } } }, /bundles\.a\.aliases\.reboot_host: the bundle holds no tool "reboot_host"/)
    await refused({ a: { description: 'x', tools: ['echo'], allow: 'principal.nope ==' } }, /bundles\.a\.allow/)
  })

  it('follows a reload: a changed declaration serves, a bad one is refused naming the field and the old one keeps serving', async () => {
    const { app, file } = await gateway()
    writeFileSync(file, JSON.stringify({ bundles: { ...BUNDLES, money: { description: 'Echo only.', tools: ['echo'] } } }))
    await app.reloadTools()
    const after = await app.inject({ method: 'GET', url: '/bundles/money/tools', headers: as(KEYS.agent) })
    expect(after.json<{ tools: Array<{ id: string }> }>().tools.map(tool => tool.id)).toEqual(['echo'])
    writeFileSync(file, JSON.stringify({ bundles: { money: { description: 'x', tools: ['gone_*'] } } }))
    await expect(app.reloadTools()).rejects.toThrow(/bundles\.money\.tools\[0\]: "gone_\*" matches no tool/)
    expect((await app.inject({ method: 'GET', url: '/bundles/money/tools', headers: as(KEYS.agent) })).json<{ tools: unknown[] }>().tools).toHaveLength(1)
  })
})
