import { request as httpRequest } from 'node:http'
import type { AddressInfo } from 'node:net'
import { describe, expect, it, vi } from 'vitest'
import { z } from 'zod'
import { defineTool } from '../../src/index.js'
import type { FastifyRequest } from 'fastify'
import { settlesBefore } from '../on-time.js'
import { auth, KEYS, testApp } from './helpers.js'

/** A tool that reports when it starts and when its signal aborts. */
function watchedTool (onAbort: () => void, onStart: () => void = () => {}) {
  return defineTool({
    id: 'watched', kind: 'write', description: 'Waits until aborted or 5 s.', isReadOnly: false, isConcurrencySafe: false,
    inputSchema: z.object({ ms: z.number() }), outputSchema: z.object({ done: z.boolean() }), authorize () {},
    execute: ({ ms }, ctx) => new Promise(resolve => {
      onStart()
      const timer = setTimeout(() => resolve({ done: true }), ms)
      ctx.signal.addEventListener('abort', () => { clearTimeout(timer); onAbort() })
    }),
  })
}

function post (port: number, path: string, body: object): { done: Promise<{ status: number, body: string }>, destroy: () => void } {
  const req = httpRequest({ host: '127.0.0.1', port, path, method: 'POST', headers: { ...auth(KEYS.admin), 'content-type': 'application/json' } })
  const done = new Promise<{ status: number, body: string }>((resolve, reject) => {
    req.on('response', res => {
      let text = ''
      res.on('data', chunk => { text += String(chunk) })
      res.on('end', () => { resolve({ status: res.statusCode ?? 0, body: text }) })
    })
    req.on('error', reject)
  })
  req.end(JSON.stringify(body))
  return { done, destroy: () => req.destroy() }
}

describe('lifecycle over a real socket', () => {
  it('a client that disconnects aborts the tool signal; the call is recorded as cancelled, outcome unknown for a tool that changes state', async () => {
    let aborted = false
    let started = false
    const app = await testApp({}, [watchedTool(() => { aborted = true }, () => { started = true })])
    const requests: FastifyRequest[] = []
    app.addHook('onRequest', async request => { requests.push(request) })
    await app.listen({ host: '127.0.0.1', port: 0 })
    const { port } = app.server.address() as AddressInfo
    const call = post(port, '/tools/watched', { ms: 5000 })
    call.done.catch(() => {})
    // Once the tool runs (not after a fixed time, which a busy machine may not keep), hang up;
    // the server notices the closed socket soon after.
    await vi.waitFor(() => { expect(started).toBe(true) }, { timeout: 5_000, interval: 5 })
    call.destroy()
    await vi.waitFor(() => { expect(aborted).toBe(true) }, { timeout: 5_000, interval: 5 })
    const records = requests.map(r => r.callRecord).filter(r => r !== null)
    expect(records.map(r => [r.code, r.outcome])).toEqual([['TOOLGATE_CANCELLED', 'unknown']])
    const metrics = await app.inject({ method: 'GET', url: '/metrics' })
    expect(metrics.body).toMatch(/toolgate_tool_calls_total\{tool="watched",kind="write",effects="none",outcome="unknown"\} 1/)
  })

  it('graceful shutdown: readiness turns false, new calls get 503, calls in flight finish', async () => {
    let started = false
    const app = await testApp({}, [watchedTool(() => {}, () => { started = true })])
    await app.listen({ host: '127.0.0.1', port: 0 })
    const { port } = app.server.address() as AddressInfo
    const inFlight = post(port, '/tools/watched', { ms: 300 })
    await vi.waitFor(() => { expect(started).toBe(true) }, { timeout: 5_000, interval: 5 }) // in flight
    const shutdown = app.catalog.shutdown(2000)
    expect((await app.inject({ method: 'GET', url: '/readyz' })).statusCode).toBe(503)
    const refused = await post(port, '/tools/watched', { ms: 1 }).done
    expect(refused.status).toBe(503)
    expect(JSON.parse(refused.body).code).toBe('TOOLGATE_UNAVAILABLE')
    const finished = await inFlight.done
    expect(finished.status).toBe(200)
    expect(JSON.parse(finished.body)).toEqual({ done: true })
    await shutdown
  })

  it('graceful shutdown aborts what outlives the grace period', async () => {
    let aborted = false
    let started = false
    const app = await testApp({}, [watchedTool(() => { aborted = true }, () => { started = true })])
    await app.listen({ host: '127.0.0.1', port: 0 })
    const { port } = app.server.address() as AddressInfo
    const inFlight = post(port, '/tools/watched', { ms: 5000 })
    await vi.waitFor(() => { expect(started).toBe(true) }, { timeout: 5_000, interval: 5 }) // in flight
    // Ends by the grace period, not by the call's 5 s: before a timer of 600 ms started with it
    // fires (the event loop's clock, which a busy machine delays alike for the grace and the check).
    expect(await settlesBefore(app.catalog.shutdown(200), 600)).toBe(true)
    expect(aborted).toBe(true)
    const response = await inFlight.done
    expect(response.status).toBe(503)
    expect(JSON.parse(response.body).outcome).toBe('unknown')
  })
})
