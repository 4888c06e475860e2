import type { ChildProcess } from 'node:child_process'
import { setTimeout as sleep } from 'node:timers/promises'
import { z } from 'zod'
import type { FastifyInstance } from 'fastify'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { buildApp } from '../../plugins/app.js'
import { defineTool, type AnyTool } from '../../src/index.js'
import { loadConfig } from '../../src/services/config.js'
import { API_KEYS, auth, KEYS } from '../http/helpers.js'
import { SLOW } from '../slow.js'
import { bothEras, upstreamsFile } from '../upstreams/helpers.js'
import { modernClient, sdkClient } from './helpers.js'

/*
 * Progress over MCP's HTTP face: a client that sends `_meta.progressToken` and takes an event
 * stream hears `notifications/progress` before its result, from a declared tool
 * (`ctx.progress`) and from an upstream server's tool, in both protocol eras and both upstream
 * eras. A client that takes JSON only gets its one JSON answer; a malformed token runs nothing.
 */

let runs = 0
/** Calls of `count` that saw their signal abort between two items. */
let abandoned = 0
const count = defineTool({
  id: 'count', kind: 'read', description: 'Counts to n, telling its progress when the caller listens.', isReadOnly: true, isConcurrencySafe: true, authorize () {},
  inputSchema: z.object({ n: z.number().int().min(1).max(100_000), gapMs: z.number().int().min(0).max(500).default(0) }),
  outputSchema: z.object({ counted: z.number(), listened: z.boolean() }),
  execute: async ({ n, gapMs }, ctx) => {
    runs++
    for (let i = 1; i <= n; i++) {
      ctx.progress?.({ progress: i, total: n, message: `item ${i}` })
      if (gapMs === 0) continue
      await sleep(gapMs)
      if (ctx.signal.aborted) {
        abandoned++
        break
      }
    }
    return { counted: n, listened: ctx.progress !== undefined }
  },
})

const children: ChildProcess[] = []
let app: FastifyInstance
let url: URL

beforeAll(async () => {
  const file = upstreamsFile({
    mcpServers: await bothEras(children),
  })
  app = await buildApp({ config: loadConfig({}, { apiKeys: API_KEYS, upstreamsFile: file }), tools: [count as unknown as AnyTool] })
  url = new URL(`${await app.listen({ host: '127.0.0.1', port: 0 })}/mcp`)
}, SLOW.PROCESS_MS)
afterAll(async () => {
  await app?.close()
  for (const child of children) child.kill('SIGKILL')
})

interface Heard { progress: number, total?: number, message?: string }

/** One `tools/call` posted as a client would, its events parsed: the notifications, then the answer. */
async function post (params: Record<string, unknown>, accept: string): Promise<{ type: string | null, messages: Array<Record<string, unknown>> }> {
  const response = await fetch(url, {
    method: 'POST',
    headers: { ...auth(KEYS.caller), 'content-type': 'application/json', accept, 'mcp-protocol-version': '2025-11-25' },
    body: JSON.stringify({ jsonrpc: '2.0', id: 7, method: 'tools/call', params }),
  })
  const text = await response.text()
  const type = response.headers.get('content-type')
  if (type?.startsWith('application/json') === true) return { type, messages: [JSON.parse(text) as Record<string, unknown>] }
  const messages = text.split('\n\n').filter(event => event !== '').map(event => JSON.parse(event.split('\n').find(line => line.startsWith('data: '))!.slice(6)) as Record<string, unknown>)
  return { type, messages }
}

describe('progress over MCP HTTP', { timeout: SLOW.PROCESS_MS }, () => {
  it('a declared tool\'s progress reaches both eras\' SDK clients in order, then the result', async () => {
    const legacy = await sdkClient(url)
    const heard: Heard[] = []
    const result = await legacy.callTool({ name: 'count', arguments: { n: 3, gapMs: 120 } }, undefined, { onprogress: update => { heard.push(update) } })
    expect(result.structuredContent).toEqual({ counted: 3, listened: true })
    expect(heard).toEqual([1, 2, 3].map(i => ({ progress: i, total: 3, message: `item ${i}` })))
    await legacy.close()

    const modern = await modernClient(url)
    const modernHeard: number[] = []
    const viaModern = await modern.callTool({ name: 'count', arguments: { n: 3, gapMs: 120 } }, { onprogress: update => { modernHeard.push(update.progress) } })
    expect(viaModern.structuredContent).toEqual({ counted: 3, listened: true })
    expect(modernHeard).toEqual([1, 2, 3])
    await modern.close()
  })

  it('as a stream of events only once there is progress: its notifications name the client\'s token, the result comes last', async () => {
    const { type, messages } = await post({ name: 'count', arguments: { n: 2, gapMs: 120 }, _meta: { progressToken: 'tok-1' } }, 'application/json, text/event-stream')
    expect(type).toMatch(/^text\/event-stream/)
    expect(messages).toEqual([
      { jsonrpc: '2.0', method: 'notifications/progress', params: { progressToken: 'tok-1', progress: 1, total: 2, message: 'item 1' } },
      { jsonrpc: '2.0', method: 'notifications/progress', params: { progressToken: 'tok-1', progress: 2, total: 2, message: 'item 2' } },
      expect.objectContaining({ id: 7, result: expect.objectContaining({ structuredContent: { counted: 2, listened: true } }) }),
    ])
    // No token: one JSON answer, and the tool had no one to tell.
    const quiet = await post({ name: 'count', arguments: { n: 2 } }, 'application/json, text/event-stream')
    expect(quiet.type).toMatch(/^application\/json/)
    expect(quiet.messages[0]).toMatchObject({ result: { structuredContent: { counted: 2, listened: false } } })
  })

  it('a client that takes JSON only gets its one JSON answer, and the tool is not asked for progress', async () => {
    const { type, messages } = await post({ name: 'count', arguments: { n: 2 }, _meta: { progressToken: 5 } }, 'application/json')
    expect(type).toMatch(/^application\/json/)
    expect(messages).toEqual([expect.objectContaining({ id: 7, result: expect.objectContaining({ structuredContent: { counted: 2, listened: false } }) })])
  })

  it('a tool reporting in a tight loop is paced: a hundred thousand updates are a handful of events', async () => {
    const { messages } = await post({ name: 'count', arguments: { n: 100_000 }, _meta: { progressToken: 'busy' } }, 'text/event-stream')
    const notes = messages.filter(message => message.method === 'notifications/progress')
    expect(notes.length).toBeGreaterThanOrEqual(1)
    expect(notes.length).toBeLessThan(20)
    expect(messages.at(-1)).toMatchObject({ result: { structuredContent: { counted: 100_000, listened: true } } })
  })

  it('a malformed progressToken is invalid params naming it, and nothing runs', async () => {
    const before = runs
    for (const token of [{ a: 1 }, 1.5, true, null]) {
      const { messages } = await post({ name: 'count', arguments: { n: 1 }, _meta: { progressToken: token } }, 'application/json, text/event-stream')
      expect(messages[0]).toMatchObject({ id: 7, error: { code: -32602, data: { errors: [{ pointer: '/params/_meta/progressToken' }] } } })
    }
    expect(runs).toBe(before)
  })

  it('an upstream tool\'s progress passes through: server-everything over stdio (2025-11-25) and a 2026-07-28 server over HTTP', async () => {
    const legacy = await sdkClient(url)
    const heard: Heard[] = []
    const result = await legacy.callTool({ name: 'everything_trigger_long_running_operation', arguments: { duration: 0.6, steps: 3 } }, undefined, { onprogress: update => { heard.push(update) } })
    expect(result.isError).toBe(false)
    expect(heard).toEqual([1, 2, 3].map(i => ({ progress: i, total: 3 })))
    const modernHeard: Heard[] = []
    await legacy.callTool({ name: 'modern_count', arguments: { n: 2 } }, undefined, { onprogress: update => { modernHeard.push(update) } })
    expect(modernHeard).toEqual([1, 2].map(i => ({ progress: i, total: 2, message: `step ${i}` })))
    await legacy.close()

    const modern = await modernClient(url)
    const viaModern: number[] = []
    await modern.callTool({ name: 'everything_trigger_long_running_operation', arguments: { duration: 0.6, steps: 3 } }, { onprogress: update => { viaModern.push(update.progress) } })
    expect(viaModern).toEqual([1, 2, 3])
    await modern.close()
  })

  it('a client gone mid-stream cancels the call: the tool sees its signal abort', async () => {
    const controller = new AbortController()
    const response = await fetch(url, {
      method: 'POST', signal: controller.signal,
      headers: { ...auth(KEYS.caller), 'content-type': 'application/json', accept: 'text/event-stream', 'mcp-protocol-version': '2025-11-25' },
      body: JSON.stringify({ jsonrpc: '2.0', id: 8, method: 'tools/call', params: { name: 'count', arguments: { n: 50, gapMs: 100 }, _meta: { progressToken: 'gone' } } }),
    })
    const reader = response.body!.getReader()
    const first = new TextDecoder().decode((await reader.read()).value)
    expect(first).toContain('"progressToken":"gone"')
    const before = abandoned
    controller.abort()
    await expect.poll(() => abandoned, { timeout: 5000 }).toBe(before + 1)
  })

  it('an upstream tool called without a token answers one JSON message', async () => {
    const { messages } = await post({ name: 'everything_trigger_long_running_operation', arguments: { duration: 0.3, steps: 2 } }, 'application/json, text/event-stream')
    expect(messages).toHaveLength(1)
    expect(messages[0]).toMatchObject({ result: { isError: false } })
  })
})
