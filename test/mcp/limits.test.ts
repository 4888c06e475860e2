/**
 * Limits over MCP, with the official SDK clients of both eras: a refusal is a tool error that
 * carries the retry time and the limit; an ask is the approval flow, which the 2.x client on
 * revision 2026-07-28 follows by itself.
 */
import type { AddressInfo } from 'node:net'
import { afterEach, describe, expect, it } from 'vitest'
import { z } from 'zod'
import type { FastifyInstance } from 'fastify'
import { defineTool } from '../../src/index.js'
import { hashApiKey } from '../../src/services/auth/api-keys.js'
import { API_KEYS, auth, KEYS, testApp } from '../http/helpers.js'
import { modernClient, sdkClient } from './helpers.js'

const APPROVER = 'approver-key-0123456789'
const LIMITS = 'dev.toolgate/limits'
const PROBLEM = 'dev.toolgate/problem'

function limitedTools (runs: { count: number }) {
  return [
    defineTool({
      id: 'launch', kind: 'write', description: 'Once a day per principal.', effects: ['irreversible'], isReadOnly: false, isConcurrencySafe: false,
      inputSchema: z.object({}), outputSchema: z.object({ ok: z.boolean() }), authorize () {}, execute: () => ({ ok: true }),
      limits: [{ name: 'daily', per: 'principal', quota: { calls: 1, window: 'day' } }],
    }),
    defineTool({
      id: 'spend', kind: 'network', description: 'Spend cents: 100 a day, past that a person decides.', effects: ['financial'], isReadOnly: false, isConcurrencySafe: false,
      inputSchema: z.object({ cents: z.number().int().positive() }), outputSchema: z.object({ spent: z.number() }), authorize () {},
      execute: ({ cents }) => { runs.count++; return { spent: cents } },
      limits: [{ name: 'daily', per: 'principal', over: 'approve', budget: { amount: 'input.cents', max: 100, window: 'day' } }],
    }),
  ]
}

const open: FastifyInstance[] = []
afterEach(async () => { await Promise.all(open.splice(0).map(app => app.close())) })

async function gateway (): Promise<{ url: URL, runs: { count: number } }> {
  const runs = { count: 0 }
  const app = await testApp({
    apiKeys: [...API_KEYS, { principal: 'approver', sha256: hashApiKey(APPROVER), scopes: ['tools:read', 'tools:approve'] }],
    mcpApprovalWaitMs: 1_000,
  }, limitedTools(runs))
  open.push(app)
  await app.listen({ host: '127.0.0.1', port: 0 })
  const { port } = app.server.address() as AddressInfo
  return { url: new URL(`http://127.0.0.1:${port}/mcp`), runs }
}

describe('limits over MCP', () => {
  it('SDK 1.x: a call reports what it spent; past the limit the answer is a tool error with the retry time and the limit', async () => {
    const { url } = await gateway()
    const client = await sdkClient(url)
    const first = await client.callTool({ name: 'launch', arguments: {} })
    expect(first.isError).toBe(false)
    expect((first._meta as Record<string, unknown>)[LIMITS]).toMatchObject([{ name: 'launch.daily', kind: 'quota', max: 1, remaining: 0, spends: 1 }])
    const refused = await client.callTool({ name: 'launch', arguments: {} })
    expect(refused.isError).toBe(true)
    const problem = (refused._meta as Record<string, { code: string, detail: string, limit: { name: string, retryAfterSeconds: number } }>)[PROBLEM]!
    expect(problem).toMatchObject({ code: 'TOOLGATE_LIMIT_EXCEEDED', status: 429, limit: { name: 'launch.daily', kind: 'quota', remaining: 0 } })
    expect(problem.limit.retryAfterSeconds).toBeGreaterThan(0)
    expect(problem.detail).toContain(`retry in ${problem.limit.retryAfterSeconds} s`)
    // A dry run spends nothing and says what it would.
    const dry = await client.callTool({ name: 'spend', arguments: { cents: 40 }, _meta: { 'dev.toolgate/dryRun': true } })
    expect((dry._meta as Record<string, unknown>)[LIMITS]).toMatchObject([{ name: 'spend.daily', spends: 40, remaining: 60 }])
    await client.close()
  })

  it('SDK 2.x on 2026-07-28: past a budget where a person decides, the client waits for the decision and the call runs once', async () => {
    const { url, runs } = await gateway()
    const client = await modernClient(url)
    expect(await client.callTool({ name: 'spend', arguments: { cents: 90 } })).toMatchObject({ isError: false, structuredContent: { spent: 90 } })
    const called = client.callTool({ name: 'spend', arguments: { cents: 20 } })
    let pending: Array<{ id: string, reasons: string[], limits: string[] }> = []
    while (pending.length === 0) {
      const res = await fetch(new URL('/approvals', url), { headers: auth(APPROVER) })
      pending = (await res.json() as { approvals: typeof pending }).approvals
    }
    expect(pending[0]).toMatchObject({ reasons: ['limit'], limits: ['spend.daily'] })
    expect(runs.count).toBe(1)
    const decided = await fetch(new URL(`/approvals/${pending[0]!.id}/approve`, url), { method: 'POST', headers: { ...auth(APPROVER), 'content-type': 'application/json' }, body: '{}' })
    expect(decided.status).toBe(200)
    expect(await called).toMatchObject({ isError: false, structuredContent: { spent: 20 } })
    expect(runs.count).toBe(2)
    const limits = await fetch(new URL('/limits', url), { headers: auth(KEYS.caller) })
    expect(await limits.json()).toMatchObject({ limits: [{ name: 'launch.daily', remaining: 1 }, { name: 'spend.daily', remaining: 0 }] })
    await client.close()
  })
})
