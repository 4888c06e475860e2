import { randomBytes } from 'node:crypto'
import type { FastifyInstance } from 'fastify'
import { Webhook } from 'standardwebhooks'
import { afterEach, describe, expect, it } from 'vitest'
import { buildApp } from '../../plugins/app.js'
import { loadConfig, type ConfigInput } from '../../src/services/config.js'
import { API_KEYS, approvalTools, call, decide, KEYS } from '../approvals/helpers.js'
import { startReceiver, type Receiver } from './receiver.js'

/*
 * Approval events posted to a receiver that verifies them with the `standardwebhooks`
 * package exactly as its README says (`new Webhook(secret).verify(body, headers)`).
 */

const SECRET = `whsec_${randomBytes(32).toString('base64')}`
const open: Array<{ close: () => Promise<unknown> }> = []
afterEach(async () => { await Promise.all(open.splice(0).map(async item => await item.close())) })

async function gateway (receiver: Receiver, overrides: ConfigInput = {}): Promise<FastifyInstance> {
  const config = loadConfig({}, { apiKeys: API_KEYS, approvalWebhookUrls: [receiver.url], approvalWebhookSecret: SECRET, approvalsPublicUrl: 'https://gw.example.com/', approvalWebhookBackoffMs: 20, ...overrides })
  const app = await buildApp({ config, tools: approvalTools([]) })
  open.push(app)
  return app
}

async function receiver (...args: Parameters<typeof startReceiver>): Promise<Receiver> {
  const started = await startReceiver(...args)
  open.push(started)
  return started
}

interface Event { type: string, timestamp: string, data: Record<string, unknown> }

function verified (received: { headers: Record<string, unknown>, body: string }): Event {
  return new Webhook(SECRET).verify(received.body, received.headers as Record<string, string>) as Event
}

describe('approval webhooks (Standard Webhooks)', () => {
  it('a request and its decision each reach the receiver once, signed so that standardwebhooks verifies them', async () => {
    const hook = await receiver()
    const app = await gateway(hook)
    const asked = await app.inject(call('pay', { to: 'mallory', amount: 700 }, KEYS.alice))
    expect(asked.statusCode).toBe(202)
    const { id, inputDigest } = asked.json()
    expect((await decide(app, id, 'approve', KEYS.bob, 'ok by phone')).statusCode).toBe(200)
    const [requested, decided] = (await hook.waitFor(2)).map(verified)
    expect(requested).toMatchObject({
      type: 'approval.requested',
      data: { id, tool: 'pay', kind: 'write', effects: ['financial', 'irreversible'], requestedBy: 'alice', inputDigest, status: 'pending', url: `https://gw.example.com/approvals/ui#${id}` },
    })
    expect(requested!.data).not.toHaveProperty('input')
    expect(decided).toMatchObject({ type: 'approval.decided', data: { id, status: 'approved', decidedBy: 'bob', note: 'ok by phone' } })
    expect(hook.received.map(r => r.headers['webhook-id'])).toEqual([`msg_${id}_requested`, `msg_${id}_decided`])
  })

  it('a changed body or another secret fails verification', async () => {
    const hook = await receiver()
    const app = await gateway(hook)
    await app.inject(call('pay', { to: 'mallory', amount: 700 }, KEYS.alice))
    const [event] = await hook.waitFor(1)
    const headers = event!.headers as Record<string, string>
    expect(() => new Webhook(SECRET).verify(event!.body.replace('mallory', 'trudy').replace('"pay"', '"paz"'), headers)).toThrow()
    expect(() => new Webhook(`whsec_${randomBytes(32).toString('base64')}`).verify(event!.body, headers)).toThrow()
  })

  it('an approval nobody decides sends approval.expired; APPROVAL_WEBHOOK_INPUT adds the input', async () => {
    const hook = await receiver()
    const app = await gateway(hook, { approvalTtlMs: 1_000, approvalWebhookInput: true })
    const { id } = (await app.inject(call('pay', { to: 'mallory', amount: 700 }, KEYS.alice))).json()
    await new Promise(resolve => setTimeout(resolve, 1_100))
    await app.inject({ method: 'GET', url: '/approvals', headers: { 'x-api-key': KEYS.bob } }) // sweeps
    const [requested, expired] = (await hook.waitFor(2)).map(verified)
    expect(requested!.data.input).toEqual({ to: 'mallory', amount: 700 })
    expect(expired).toMatchObject({ type: 'approval.expired', data: { id, status: 'expired', input: { to: 'mallory', amount: 700 } } })
  })

  it('the call is answered while the receiver still holds its request open', async () => {
    const held: Array<() => void> = []
    const hook = await receiver((_r, response) => { held.push(() => response.writeHead(204).end()) })
    const app = await gateway(hook)
    const asked = app.inject(call('pay', { to: 'mallory', amount: 700 }, KEYS.alice))
    await hook.waitFor(1)
    expect((await asked).statusCode).toBe(202)
    expect(held).toHaveLength(1) // not answered yet, and the call is done
    for (const release of held) release()
  })

  it('a failing receiver gets every attempt with the same webhook-id, then the delivery is given up and counted', async () => {
    const hook = await receiver((_r, response) => { response.writeHead(500).end() })
    const app = await gateway(hook, { approvalWebhookAttempts: 3 })
    await app.inject(call('pay', { to: 'mallory', amount: 700 }, KEYS.alice))
    const attempts = await hook.waitFor(3)
    expect(new Set(attempts.map(a => a.headers['webhook-id'])).size).toBe(1)
    for (const attempt of attempts) expect(verified(attempt).type).toBe('approval.requested')
    let metrics = ''
    for (let i = 0; i < 50 && !metrics.includes('outcome="failed"} 1'); i++) {
      await new Promise(resolve => setTimeout(resolve, 50))
      metrics = (await app.inject({ method: 'GET', url: '/metrics' })).body
    }
    expect(metrics).toContain('toolgate_approval_webhooks_total{outcome="failed"} 1')
    expect(metrics).toContain('toolgate_approval_webhooks_total{outcome="retried"} 2')
    expect(metrics).toContain('toolgate_approval_webhooks_total{outcome="delivered"} 0')
    await new Promise(resolve => setTimeout(resolve, 300))
    expect(hook.received).toHaveLength(3) // bounded: no fourth attempt
  })

  it('a receiver that fails twice then answers 200 gets the event on the third attempt, counted delivered', async () => {
    let calls = 0
    const hook = await receiver((_r, response) => { response.writeHead(++calls <= 2 ? 503 : 200).end() })
    const app = await gateway(hook)
    await app.inject(call('pay', { to: 'mallory', amount: 700 }, KEYS.alice))
    await hook.waitFor(3)
    let metrics = ''
    for (let i = 0; i < 50 && !metrics.includes('outcome="delivered"} 1'); i++) {
      await new Promise(resolve => setTimeout(resolve, 50))
      metrics = (await app.inject({ method: 'GET', url: '/metrics' })).body
    }
    expect(metrics).toContain('toolgate_approval_webhooks_total{outcome="delivered"} 1')
    expect(metrics).toContain('toolgate_approval_webhooks_total{outcome="retried"} 2')
  })

  it('a webhook URL without a whsec_ secret stops start-up', () => {
    expect(() => loadConfig({ APPROVAL_WEBHOOK_URL: 'https://hooks.example.com/a' })).toThrow(/APPROVAL_WEBHOOK_SECRET/)
    expect(() => loadConfig({ APPROVAL_WEBHOOK_URL: 'https://hooks.example.com/a', APPROVAL_WEBHOOK_SECRET: 'hunter2' })).toThrow(/whsec_/)
  })
})
