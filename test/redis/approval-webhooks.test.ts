import { randomBytes } from 'node:crypto'
import type { FastifyInstance } from 'fastify'
import { Redis } from 'ioredis'
import { Webhook } from 'standardwebhooks'
import { afterAll, afterEach, describe, expect, it } from 'vitest'
import { buildApp } from '../../plugins/app.js'
import { loadConfig } from '../../src/services/config.js'
import { redisClaim } from '../../src/services/approvals/webhooks/claims.js'
import { WebhookDeliveries } from '../../src/services/approvals/webhooks/deliveries.js'
import { API_KEYS, approvalTools, call, decide, KEYS } from '../approvals/helpers.js'
import { startReceiver } from '../webhooks/receiver.js'
import { cleanPrefix, HAVE_REDIS, REDIS_URL, testPrefix } from './redis-env.js'

const SECRET = `whsec_${randomBytes(32).toString('base64')}`
const prefixes: string[] = []
const open: Array<{ close: () => unknown }> = []
afterEach(async () => { for (const item of open.splice(0)) await item.close() })
afterAll(async () => { await Promise.all(prefixes.map(cleanPrefix)) })

describe.skipIf(!HAVE_REDIS)('approval webhooks from two replicas on one Redis', () => {
  it('every event reaches the receiver once, whichever replica asked, decided or swept', async () => {
    const hook = await startReceiver()
    open.push(hook)
    const prefix = testPrefix()
    prefixes.push(prefix)
    const config = loadConfig({}, { apiKeys: API_KEYS, redisUrl: REDIS_URL, redisPrefix: prefix, approvalWebhookUrls: [hook.url], approvalWebhookSecret: SECRET, approvalTtlMs: 1_000 })
    const tools = approvalTools([])
    const [a, b] = await Promise.all([buildApp({ config, tools }), buildApp({ config, tools })]) as [FastifyInstance, FastifyInstance]
    open.push(a, b)
    const decided = (await a.inject(call('pay', { to: 'mallory', amount: 700 }, KEYS.alice))).json().id as string
    expect((await decide(b, decided, 'approve', KEYS.bob)).statusCode).toBe(200)
    const expired = (await b.inject(call('pay', { to: 'trudy', amount: 800 }, KEYS.carol))).json().id as string
    await new Promise(resolve => setTimeout(resolve, 1_100))
    // Both replicas sweep (each GET does); the store hands each expiry to one of them.
    await Promise.all([a, b].map(async app => await app.inject({ method: 'GET', url: '/approvals', headers: { 'x-api-key': KEYS.bob } })))
    await hook.waitFor(4)
    await new Promise(resolve => setTimeout(resolve, 300)) // room for a duplicate to arrive
    for (const r of hook.received) new Webhook(SECRET).verify(r.body, r.headers as Record<string, string>)
    const ids = hook.received.map(r => r.headers['webhook-id'])
    expect(ids.sort()).toEqual([`msg_${decided}_decided`, `msg_${decided}_requested`, `msg_${expired}_expired`, `msg_${expired}_requested`].sort())
  })

  it('two replicas handed the same message deliver it once: the first claim wins', async () => {
    const hook = await startReceiver()
    open.push(hook)
    const prefix = testPrefix()
    prefixes.push(prefix)
    const clients = [new Redis(REDIS_URL), new Redis(REDIS_URL)]
    open.push(...clients.map(client => ({ close: () => client.disconnect() })))
    const replicas = clients.map(client => new WebhookDeliveries({ urls: [hook.url], secret: SECRET, attempts: 1, backoffMs: 10, timeoutMs: 2_000, claim: redisClaim(client, prefix) }))
    const message = { id: 'msg_same', type: 'approval.requested' as const, body: '{"type":"approval.requested","data":{}}' }
    for (const replica of replicas) replica.send(message)
    await hook.waitFor(1)
    await new Promise(resolve => setTimeout(resolve, 300))
    expect(hook.received).toHaveLength(1)
    // Without the shared claim each replica would have sent it: the claim is what holds it to one.
    const unclaimed = new WebhookDeliveries({ urls: [hook.url], secret: SECRET, attempts: 1, backoffMs: 10, timeoutMs: 2_000 })
    unclaimed.send(message)
    await hook.waitFor(2)
  })
})
