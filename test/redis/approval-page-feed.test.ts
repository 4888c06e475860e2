import type { FastifyInstance } from 'fastify'
import { afterAll, afterEach, describe, expect, it } from 'vitest'
import { buildApp } from '../../plugins/app.js'
import { loadConfig } from '../../src/services/config.js'
import { API_KEYS, approvalTools, call, decide, KEYS } from '../approvals/helpers.js'
import { cleanPrefix, HAVE_REDIS, REDIS_URL, testPrefix } from './redis-env.js'

const prefixes: string[] = []
const open: FastifyInstance[] = []
afterEach(async () => { await Promise.all(open.splice(0).map(app => app.close())) })
afterAll(async () => { await Promise.all(prefixes.map(cleanPrefix)) })

const feed = async (app: FastifyInstance, headers: Record<string, string> = {}) =>
  await app.inject({ method: 'GET', url: '/approvals/ui/feed', headers: { 'x-api-key': KEYS.dave, ...headers } })

describe.skipIf(!HAVE_REDIS)('the approvals page feed on two replicas sharing Redis', () => {
  it('a request made on one replica shows on the other\'s page, and a decision made there shows under recent decisions on the first', async () => {
    const prefix = testPrefix()
    prefixes.push(prefix)
    const config = loadConfig({}, { apiKeys: API_KEYS, redisUrl: REDIS_URL, redisPrefix: prefix })
    const tools = approvalTools([])
    const [a, b] = await Promise.all([buildApp({ config, tools }), buildApp({ config, tools })]) as [FastifyInstance, FastifyInstance]
    open.push(a, b)
    const before = await feed(b)
    const { id } = (await a.inject(call('pay', { to: 'mallory', amount: 700 }, KEYS.alice))).json()
    const after = await feed(b, { 'if-none-match': String(before.headers.etag) })
    expect(after.statusCode).toBe(200) // changed, though nothing happened on b
    expect(after.json().pending.map((p: { id: string }) => p.id)).toEqual([id])
    expect((await decide(b, id, 'approve', KEYS.dave, 'fine')).statusCode).toBe(200)
    expect((await feed(a)).json()).toMatchObject({ pending: [], recent: [{ id, status: 'approved', decidedBy: 'dave', note: 'fine' }] })
  })
})
