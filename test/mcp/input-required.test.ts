/**
 * Approvals over MCP revision 2026-07-28: a call that waits for a person answers
 * `input_required` with a sealed, single-use, caller-bound `requestState`; the client's retry
 * with it runs the approved call once. Driven by the 2.x SDK client (which retries by itself)
 * and, for what an attacker would send, by raw JSON-RPC.
 */
import type { AddressInfo } from 'node:net'
import { describe, expect, it } from 'vitest'
import type { Client } from '@modelcontextprotocol/client'
import type { FastifyInstance } from 'fastify'
import { z } from 'zod'
import { defineTool } from '../../src/index.js'
import { hashApiKey } from '../../src/services/auth/api-keys.js'
import { API_KEYS, auth, KEYS, testApp } from '../http/helpers.js'
import { modernClient } from './helpers.js'

const APPROVER = 'approver-key-0123456789'

/** Each test's own counter: how often `transfer` and `wire` really ran. */
function payTools (): { runs: { count: number }, tools: ReturnType<typeof defineTool>[] } {
  const runs = { count: 0 }
  const declare = (id: string): ReturnType<typeof defineTool> => defineTool({
    id, kind: 'network', description: 'Move money to an outside account.', isReadOnly: false, isConcurrencySafe: false,
    effects: ['external', 'financial', 'irreversible'], authorize () {},
    inputSchema: z.object({ cents: z.number().int().positive() }), outputSchema: z.object({ sent: z.number() }),
    execute: ({ cents }) => { runs.count++; return { sent: cents } },
  })
  return { runs, tools: [declare('transfer'), declare('wire')] }
}

async function gateway (overrides: Parameters<typeof testApp>[0] = {}): Promise<{ app: FastifyInstance, url: URL, runs: { count: number } }> {
  const { runs, tools } = payTools()
  const app = await testApp({
    apiKeys: [...API_KEYS, { principal: 'approver', sha256: hashApiKey(APPROVER), scopes: ['tools:read', 'tools:approve'] }],
    approvalRules: [{ tools: ['transfer', 'wire'] }],
    mcpApprovalWaitMs: 1_000,
    ...overrides,
  }, tools)
  await app.listen({ host: '127.0.0.1', port: 0 })
  const { port } = app.server.address() as AddressInfo
  return { app, url: new URL(`http://127.0.0.1:${port}/mcp`), runs }
}

const ENVELOPE = {
  'io.modelcontextprotocol/protocolVersion': '2026-07-28',
  'io.modelcontextprotocol/clientInfo': { name: 'raw', version: '1' },
  'io.modelcontextprotocol/clientCapabilities': {},
}

interface RpcAnswer { status: number, result?: Record<string, unknown>, error?: { code: number, message: string, data?: unknown } }

/** One raw 2026-07-28 `tools/call`, as any client (or attacker) could send it. */
async function rawCall (url: URL, key: string, name: string, args: Record<string, unknown>, requestState?: string, meta: Record<string, unknown> = {}): Promise<RpcAnswer> {
  const res = await fetch(url, {
    method: 'POST',
    headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream', ...auth(key), 'mcp-protocol-version': '2026-07-28', 'mcp-method': 'tools/call', 'mcp-name': name },
    body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name, arguments: args, _meta: { ...ENVELOPE, ...meta }, ...(requestState === undefined ? {} : { requestState }) } }),
  })
  return { status: res.status, ...await res.json() as Omit<RpcAnswer, 'status'> }
}

async function decide (url: URL, id: string, decision: 'approve' | 'reject', note = 'checked'): Promise<void> {
  const res = await fetch(new URL(`/approvals/${id}/${decision}`, url), { method: 'POST', headers: { ...auth(APPROVER), 'content-type': 'application/json' }, body: JSON.stringify({ note }) })
  expect(res.status).toBe(200)
}

async function pendingIds (url: URL): Promise<string[]> {
  const res = await fetch(new URL('/approvals', url), { headers: auth(APPROVER) })
  return (await res.json() as { approvals: Array<{ id: string }> }).approvals.map(approval => approval.id)
}

/** A first call that needs approval: its state and the approval's id. */
async function ask (url: URL, args: Record<string, unknown> = { cents: 70_000 }): Promise<{ state: string, id: string }> {
  const first = await rawCall(url, KEYS.caller, 'transfer', args)
  expect(first.result).toMatchObject({ resultType: 'input_required', _meta: { 'dev.toolgate/approval': { status: 'pending', tool: 'transfer', requestedBy: 'caller' } } })
  const approval = first.result!._meta as Record<string, { id: string }>
  return { state: first.result!.requestState as string, id: approval['dev.toolgate/approval']!.id }
}

describe('MCP 2026-07-28: a call waiting for approval answers input_required', () => {
  it('the SDK client retries by itself while a person decides, and the approved call runs once', async () => {
    const { url, runs, app } = await gateway()
    const client = await modernClient(url)
    const called = client.callTool({ name: 'transfer', arguments: { cents: 70_000 } })
    let ids: string[] = []
    while (ids.length === 0) ids = await pendingIds(url)
    expect(runs.count).toBe(0)
    await decide(url, ids[0]!, 'approve')
    const result = await called
    expect(result).toMatchObject({ isError: false, structuredContent: { sent: 70_000 } })
    expect(runs.count).toBe(1)
    const record = await fetch(new URL(`/approvals/${ids[0]!}`, url), { headers: auth(APPROVER) })
    expect(await record.json()).toMatchObject({ status: 'consumed', decidedBy: 'approver' })
    await client.close()
    await app.close()
  })

  it('hands the state to a client that retries by hand, and the retry with it completes', async () => {
    const { url, runs, app } = await gateway()
    const client = await modernClient(url, KEYS.caller, { inputRequired: { autoFulfill: false } })
    const first = await client.callTool({ name: 'transfer', arguments: { cents: 500 } }, { allowInputRequired: true }) as unknown as Record<string, unknown>
    expect(first).toMatchObject({ resultType: 'input_required', requestState: expect.any(String) })
    const id = (first._meta as Record<string, { id: string }>)['dev.toolgate/approval']!.id
    await decide(url, id, 'approve')
    // The retry channel (`requestState`) is not in the 2.4.0 client's CallToolRequest type; it passes through.
    const retry = { name: 'transfer', arguments: { cents: 500 }, requestState: first.requestState as string } as Parameters<Client['callTool']>[0]
    const done = await client.callTool(retry)
    expect(done).toMatchObject({ isError: false, structuredContent: { sent: 500 } })
    expect(runs.count).toBe(1)
    await client.close()
    await app.close()
  })

  it('a rejection is an error result with the approver\'s note; nothing runs', async () => {
    const { url, runs, app } = await gateway()
    const { state, id } = await ask(url)
    await decide(url, id, 'reject', 'not this month')
    const answer = await rawCall(url, KEYS.caller, 'transfer', { cents: 70_000 }, state)
    expect(answer.result).toMatchObject({ resultType: 'complete', isError: true, _meta: { 'dev.toolgate/problem': { status: 403, code: 'TOOLGATE_APPROVAL_REJECTED', note: 'not this month' }, 'dev.toolgate/approvalId': id } })
    expect(runs.count).toBe(0)
    await app.close()
  })

  it('undecided after the wait: input_required again, with a new state; the old one is spent', async () => {
    const { url, runs, app } = await gateway()
    const { state, id } = await ask(url)
    const started = Date.now()
    const again = await rawCall(url, KEYS.caller, 'transfer', { cents: 70_000 }, state)
    expect(Date.now() - started).toBeGreaterThanOrEqual(900) // it waited for a decision first
    expect(again.result).toMatchObject({ resultType: 'input_required', _meta: { 'dev.toolgate/approval': { id, status: 'pending' } } })
    const next = again.result!.requestState as string
    expect(next).not.toBe(state)
    const replayed = await rawCall(url, KEYS.caller, 'transfer', { cents: 70_000 }, state)
    // Refused, but its own caller learns the approval's id, to go on by id if it lost the newer state.
    expect(replayed.error).toMatchObject({ code: -32602, message: expect.stringContaining('used already'), data: { approvalId: id } })
    await decide(url, id, 'approve')
    expect((await rawCall(url, KEYS.caller, 'transfer', { cents: 70_000 }, next)).result).toMatchObject({ resultType: 'complete', isError: false, structuredContent: { sent: 70_000 } })
    // Single use: the state that ran the call runs nothing again.
    expect((await rawCall(url, KEYS.caller, 'transfer', { cents: 70_000 }, next)).error).toMatchObject({ code: -32602 })
    expect(runs.count).toBe(1)
    await app.close()
  })

  it('a decision made while a retry waits reaches it: the retry completes in the same request', async () => {
    const { url, runs, app } = await gateway({ mcpApprovalWaitMs: 10_000 })
    const { state, id } = await ask(url)
    const retry = rawCall(url, KEYS.caller, 'transfer', { cents: 70_000 }, state)
    await new Promise(resolve => setTimeout(resolve, 100))
    await decide(url, id, 'approve')
    expect((await retry).result).toMatchObject({ resultType: 'complete', structuredContent: { sent: 70_000 } })
    expect(runs.count).toBe(1)
    await app.close()
  })

  it('refuses a state that was altered, forged, another caller\'s or another tool\'s (-32602), and runs nothing', async () => {
    const { url, runs, app } = await gateway()
    const { state, id } = await ask(url)
    await decide(url, id, 'approve')
    const flipped = state.slice(0, 20) + (state[20] === 'A' ? 'B' : 'A') + state.slice(21)
    for (const [key, name, bad] of [
      [KEYS.caller, 'transfer', flipped],
      [KEYS.caller, 'transfer', state.slice(0, -2)],
      [KEYS.caller, 'transfer', 'eyJ2IjoxfQ'],
      [KEYS.caller, 'transfer', 'not base64url!'],
      [KEYS.caller, 'transfer', 'x'.repeat(10_000)],
      [KEYS.admin, 'transfer', state],
      [KEYS.caller, 'wire', state],
    ] as const) {
      const answer = await rawCall(url, key, name, { cents: 70_000 }, bad)
      expect(answer.error, `${key} ${name} ${bad.slice(0, 30)}`).toMatchObject({ code: -32602, message: expect.stringMatching(/^requestState refused: /) })
    }
    const wrongType = await rawCall(url, KEYS.caller, 'transfer', { cents: 70_000 }, 42 as unknown as string)
    expect(wrongType.error).toMatchObject({ code: -32602 })
    expect(runs.count).toBe(0)
    // None of that spent the state of the caller it was issued to.
    expect((await rawCall(url, KEYS.caller, 'transfer', { cents: 70_000 }, state)).result).toMatchObject({ structuredContent: { sent: 70_000 } })
    expect(runs.count).toBe(1)
    await app.close()
  })

  it('a state from another gateway (another secret) is refused; one configured secret is shared', async () => {
    const secret = 's'.repeat(40)
    const a = await gateway({ mcpStateSecret: secret })
    const b = await gateway({ mcpStateSecret: secret })
    const c = await gateway()
    const { state } = await ask(a.url)
    // b has the same secret but not the approval (memory stores): the pipeline says so.
    expect((await rawCall(b.url, KEYS.caller, 'transfer', { cents: 70_000 }, state)).result).toMatchObject({ isError: true, _meta: { 'dev.toolgate/problem': { code: 'TOOLGATE_APPROVAL_NOT_FOUND' } } })
    expect((await rawCall(c.url, KEYS.caller, 'transfer', { cents: 70_000 }, state)).error).toMatchObject({ code: -32602, message: expect.stringContaining('not issued by this gateway') })
    for (const g of [a, b, c]) await g.app.close()
  })

  it('the retry re-checks the call: other arguments under the approval are 422, and spend the state', async () => {
    const { url, runs, app } = await gateway()
    const { state, id } = await ask(url)
    await decide(url, id, 'approve')
    const other = await rawCall(url, KEYS.caller, 'transfer', { cents: 99_999 }, state)
    expect(other.result).toMatchObject({ isError: true, _meta: { 'dev.toolgate/problem': { status: 422, code: 'TOOLGATE_APPROVAL_MISMATCH' } } })
    expect(runs.count).toBe(0)
    await app.close()
  })

  it('a state continues exactly its call: with a dry run or another approval id it is refused, and not spent', async () => {
    const { url, runs, app } = await gateway()
    const { state, id } = await ask(url)
    await decide(url, id, 'approve')
    for (const meta of [{ 'dev.toolgate/dryRun': true }, { 'dev.toolgate/approvalId': id }]) {
      expect((await rawCall(url, KEYS.caller, 'transfer', { cents: 70_000 }, state, meta)).error).toMatchObject({ code: -32602 })
    }
    expect(runs.count).toBe(0)
    expect((await rawCall(url, KEYS.caller, 'transfer', { cents: 70_000 }, state)).result).toMatchObject({ structuredContent: { sent: 70_000 } })
    await app.close()
  })

  it('an expired state is refused; asking anew works', async () => {
    const { url, app } = await gateway({ approvalTtlMs: 1_000 })
    const { state, id } = await ask(url)
    await new Promise(resolve => setTimeout(resolve, 2_100)) // pending 1 s, then the 1 s an approval could be used
    expect((await rawCall(url, KEYS.caller, 'transfer', { cents: 70_000 }, state)).error).toMatchObject({ code: -32602, message: expect.stringContaining('expired') })
    const again = await ask(url)
    expect(again.id).not.toBe(id)
    await app.close()
  })

  it('a re-sent call (same idempotency key) answers the same approval with a new state, which retires the older', async () => {
    const { url, runs, app } = await gateway()
    const key = { 'dev.toolgate/idempotencyKey': 'pay-rent-11' }
    const first = await rawCall(url, KEYS.caller, 'transfer', { cents: 70_000 }, undefined, key)
    const second = await rawCall(url, KEYS.caller, 'transfer', { cents: 70_000 }, undefined, key)
    const idOf = (answer: RpcAnswer): string => (answer.result!._meta as Record<string, { id: string }>)['dev.toolgate/approval']!.id
    expect(idOf(second)).toBe(idOf(first))
    await decide(url, idOf(first), 'approve')
    expect((await rawCall(url, KEYS.caller, 'transfer', { cents: 70_000 }, first.result!.requestState as string, key)).error).toMatchObject({ code: -32602 })
    expect((await rawCall(url, KEYS.caller, 'transfer', { cents: 70_000 }, second.result!.requestState as string, key)).result).toMatchObject({ structuredContent: { sent: 70_000 } })
    // Lost that answer? The same call with the key (no state) replays it; nothing runs twice.
    expect((await rawCall(url, KEYS.caller, 'transfer', { cents: 70_000 }, undefined, key)).result).toMatchObject({ structuredContent: { sent: 70_000 }, _meta: { 'dev.toolgate/replayed': true } })
    expect(runs.count).toBe(1)
    await app.close()
  })

  it('concurrent retries with one state: one is let through, the others are refused, the call runs once', async () => {
    const { url, runs, app } = await gateway()
    const { state, id } = await ask(url)
    await decide(url, id, 'approve')
    const answers = await Promise.all(Array.from({ length: 8 }, async () => await rawCall(url, KEYS.caller, 'transfer', { cents: 70_000 }, state)))
    expect(answers.filter(answer => answer.result?.isError === false)).toHaveLength(1)
    expect(answers.filter(answer => answer.error?.code === -32602)).toHaveLength(7)
    expect(runs.count).toBe(1)
    await app.close()
  })

  it('a call that needs no approval never carries a state; older revisions keep the error result', async () => {
    const { url, app } = await gateway({ approvalRules: [] })
    expect((await rawCall(url, KEYS.caller, 'transfer', { cents: 1 })).result).toMatchObject({ resultType: 'complete', structuredContent: { sent: 1 } })
    await app.close()
    const ruled = await gateway()
    const legacy = await fetch(ruled.url, {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream', ...auth(KEYS.caller), 'mcp-protocol-version': '2025-11-25' },
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'transfer', arguments: { cents: 5 }, requestState: 'ignored' } }),
    })
    const body = await legacy.json() as { result: Record<string, unknown> }
    expect(body.result).toMatchObject({ isError: true, _meta: { 'dev.toolgate/approval': { status: 'pending' } } })
    expect(body.result.resultType).toBeUndefined()
    await ruled.app.close()
  })
})
