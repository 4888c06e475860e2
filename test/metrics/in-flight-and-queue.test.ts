import type { FastifyInstance } from 'fastify'
import { setTimeout as sleep } from 'node:timers/promises'
import { describe, expect, it } from 'vitest'
import { z } from 'zod'
import { defineTool } from '../../src/index.js'
import { httpTools } from '../fixtures/http-tools.js'
import { createGate } from '../fixtures/metrics-tools.js'
import { auth, KEYS, testApp } from '../http/helpers.js'
import { sample, scrape } from './scrape.js'

const GATED = { tool: 'gated', kind: 'write', effects: 'irreversible' }
const HANG = { tool: 'hang', kind: 'write', effects: 'none' }

function callGated (app: FastifyInstance): Promise<number> {
  return app.inject({ method: 'POST', url: '/tools/gated', headers: auth(KEYS.admin), payload: {} }).then(r => r.statusCode)
}

async function until (condition: () => boolean): Promise<void> {
  for (let i = 0; i < 400 && !condition(); i++) await sleep(5)
  expect(condition()).toBe(true)
}

describe('calls in flight', () => {
  it('the gauge counts a call while it runs and returns to 0 when it settles', async () => {
    const gate = createGate()
    const app = await testApp({}, [gate.tool])
    const call = callGated(app)
    await until(() => gate.waiting() === 1)
    expect(sample(await scrape(app), 'toolgate_tool_calls_in_flight', GATED)).toBe(1)
    gate.releaseNext()
    expect(await call).toBe(200)
    expect(sample(await scrape(app), 'toolgate_tool_calls_in_flight', GATED)).toBe(0)
  })

  it('a call that fails (here a timeout) leaves the gauge at 0 too', async () => {
    // Like the fixture's hang, with a timeout that leaves a busy machine time to scrape while it runs.
    let started = false
    const hang = defineTool({
      id: 'hang', kind: 'write', description: 'Never settles and ignores its signal.', isReadOnly: false, isConcurrencySafe: false, authorize () {}, timeoutMs: 1_000,
      inputSchema: z.object({}), outputSchema: z.null(), execute: () => { started = true; return new Promise<null>(() => {}) },
    })
    const app = await testApp({}, [hang])
    const call = app.inject({ method: 'POST', url: '/tools/hang', headers: auth(KEYS.admin), payload: {} })
    await until(() => started)
    expect(sample(await scrape(app), 'toolgate_tool_calls_in_flight', HANG)).toBe(1)
    expect((await call).statusCode).toBe(504)
    expect(sample(await scrape(app), 'toolgate_tool_calls_in_flight', HANG)).toBe(0)
  })
})

describe('the queue', () => {
  it('a call that waits for an exclusive slot shows in the queue length, then in the queue wait histogram', async () => {
    const gate = createGate()
    const app = await testApp({}, [gate.tool])
    const first = callGated(app)
    await until(() => gate.waiting() === 1)
    const second = callGated(app) // same principal, same domain: waits for the first
    await until(() => app.catalog.scheduler.queued === 1)
    const during = await scrape(app)
    expect(sample(during, 'toolgate_queue_length')).toBe(1)
    expect(sample(during, 'toolgate_tool_calls_in_flight', GATED)).toBe(2)
    await sleep(60)
    gate.releaseNext()
    await until(() => gate.waiting() === 1)
    gate.releaseNext()
    expect([await first, await second]).toEqual([200, 200])
    const after = await scrape(app)
    expect(sample(after, 'toolgate_queue_length')).toBe(0)
    expect(sample(after, 'toolgate_tool_queue_wait_seconds_count', GATED)).toBe(2)
    // The first did not wait; the second waited at least the 60 ms above.
    expect(sample(after, 'toolgate_tool_queue_wait_seconds_bucket', { ...GATED, le: '0.001' })).toBe(1)
    expect(sample(after, 'toolgate_tool_queue_wait_seconds_sum', GATED)).toBeGreaterThanOrEqual(0.055)
  })

  it('a call refused before it reached the queue observes no queue wait', async () => {
    const app = await testApp({}, httpTools)
    await app.inject({ method: 'POST', url: '/tools/echo', headers: auth(KEYS.admin), payload: { text: '' } })
    expect(sample(await scrape(app), 'toolgate_tool_queue_wait_seconds_count', { tool: 'echo', kind: 'read', effects: 'none' })).toBe(0)
  })
})
