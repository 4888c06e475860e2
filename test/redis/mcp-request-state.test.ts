/**
 * MCP 2026-07-28 approvals across replicas: the `requestState` one gateway issues opens on any
 * other on the same Redis (the sealing secret is shared through it when none is configured),
 * and its single use holds across them (the continuation nonce lives on the shared record).
 */
import { afterAll, afterEach, describe, expect, it } from 'vitest'
import type { FastifyInstance } from 'fastify'
import { Redis } from 'ioredis'
import { buildApp } from '../../plugins/app.js'
import { loadConfig } from '../../src/services/config.js'
import { RedisApprovalStore } from '../../src/services/redis/approval-store.js'
import { API_KEYS, approvalTools, decide, KEYS } from '../approvals/helpers.js'
import { cleanPrefix, HAVE_REDIS, REDIS_URL, testPrefix } from './redis-env.js'

const prefixes: string[] = []
const open: FastifyInstance[] = []
afterEach(async () => { await Promise.all(open.splice(0).map(app => app.close())) })
afterAll(async () => { await Promise.all(prefixes.map(cleanPrefix)) })

const big = { to: 'mallory', amount: 700 }

async function replicas (): Promise<{ a: FastifyInstance, b: FastifyInstance, executions: string[], prefix: string }> {
  const prefix = testPrefix()
  prefixes.push(prefix)
  const executions: string[] = []
  const tools = approvalTools(executions)
  const config = loadConfig({}, { apiKeys: API_KEYS, redisUrl: REDIS_URL, redisPrefix: prefix, mcpApprovalWaitMs: 1_000 })
  const [a, b] = await Promise.all([buildApp({ config, tools }), buildApp({ config, tools })])
  open.push(a!, b!)
  return { a: a!, b: b!, executions, prefix }
}

async function mcpCall (app: FastifyInstance, key: string, args: unknown, requestState?: string): Promise<{ result?: Record<string, unknown>, error?: { code: number, message: string } }> {
  const res = await app.inject({
    method: 'POST',
    url: '/mcp',
    headers: { 'x-api-key': key, accept: 'application/json', 'mcp-protocol-version': '2026-07-28', 'mcp-method': 'tools/call', 'mcp-name': 'pay' },
    payload: {
      jsonrpc: '2.0', id: 1, method: 'tools/call',
      params: { name: 'pay', arguments: args, _meta: { 'io.modelcontextprotocol/protocolVersion': '2026-07-28', 'io.modelcontextprotocol/clientCapabilities': {} }, ...(requestState === undefined ? {} : { requestState }) },
    },
  })
  return res.json()
}

describe.skipIf(!HAVE_REDIS)('MCP requestState shared by two gateways on one Redis', () => {
  it('issued by one, retried on the other while pending, completed on either, run once', async () => {
    const { a, b, executions } = await replicas()
    const first = await mcpCall(a, KEYS.alice, big)
    expect(first.result).toMatchObject({ resultType: 'input_required', _meta: { 'dev.toolgate/approval': { status: 'pending' } } })
    const id = (first.result!._meta as Record<string, { id: string }>)['dev.toolgate/approval']!.id
    const pending = await mcpCall(b, KEYS.alice, big, first.result!.requestState as string)
    expect(pending.result).toMatchObject({ resultType: 'input_required' })
    const next = pending.result!.requestState as string
    // The state b redeemed is spent on a as well.
    expect((await mcpCall(a, KEYS.alice, big, first.result!.requestState as string)).error).toMatchObject({ code: -32602 })
    expect((await decide(a, id, 'approve', KEYS.bob)).statusCode).toBe(200)
    const raced = await Promise.all([a, b, a, b].map(async app => await mcpCall(app, KEYS.alice, big, next)))
    expect(raced.filter(answer => answer.result?.isError === false)).toHaveLength(1)
    expect(raced.filter(answer => answer.error?.code === -32602)).toHaveLength(3)
    expect(executions).toEqual(['pay:mallory:700'])
  })

  it('the continuation is replaced atomically: expected, stale, unknown', async () => {
    const prefix = testPrefix()
    prefixes.push(prefix)
    const redis = new Redis(REDIS_URL)
    try {
      const store = new RedisApprovalStore(redis, prefix)
      const request = { id: 'c'.repeat(32), tool: 'pay', kind: 'write', effects: [], effectsLabel: 'none', inputDigest: 'd', input: {}, escalate: false, reasons: ['tool' as const], requestedBy: 'alice', approvers: [], requestedAt: Date.now() }
      expect(await store.create(request, Date.now() + 60_000, { maxPendingPerPrincipal: 5, maxPendingTotal: 5 })).toBe('created')
      expect(await store.replaceContinuation(request.id, 'n0', 'n1')).toBe('stale') // none is live yet
      expect(await store.replaceContinuation(request.id, undefined, 'n1')).toBe('replaced')
      expect(await store.replaceContinuation(request.id, 'n1', 'n2')).toBe('replaced')
      expect(await store.replaceContinuation(request.id, 'n1', 'n3')).toBe('stale')
      expect((await store.get(request.id))?.continuation).toBe('n2')
      expect(await store.replaceContinuation('f'.repeat(32), undefined, 'n1')).toBe('not_found')
    } finally {
      redis.disconnect()
    }
  })
})
