import type { ChildProcess } from 'node:child_process'
import { fileURLToPath } from 'node:url'
import { Client } from '@modelcontextprotocol/sdk/client/index.js'
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js'
import { ElicitRequestSchema } from '@modelcontextprotocol/sdk/types.js'
import type { FastifyInstance } from 'fastify'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { buildApp } from '../../plugins/app.js'
import { loadConfig } from '../../src/services/config.js'
import { API_KEYS, KEYS } from '../http/helpers.js'
import { SLOW } from '../slow.js'
import { bothEras, fixture, tempDir, upstreamsFile } from '../upstreams/helpers.js'
import { Client as ModernClient } from '@modelcontextprotocol/client'
import { StdioClientTransport as ModernStdio } from '@modelcontextprotocol/client/stdio'
import { modernClient, sdkClient } from './helpers.js'

/*
 * An upstream server's question during a call (elicitation), relayed to the client that made
 * the call where it can answer one: a 2025 server's `elicitation/create` request and a
 * 2026-07-28 server's `input_required` both reach a desktop host on `toolgate mcp` as an
 * `elicitation/create` of the gateway's, and its answer goes back. Where the client cannot
 * answer, the server sees a decline at once.
 */

const root = fileURLToPath(new URL('../../', import.meta.url))
const children: ChildProcess[] = []
let file: string
let app: FastifyInstance

beforeAll(async () => {
  const servers = await bothEras(children)
  file = upstreamsFile({ mcpServers: { up: fixture(tempDir()), modern: servers.modern } })
  app = await buildApp({ config: loadConfig({}, { apiKeys: API_KEYS, upstreamsFile: file }), tools: [] })
  await app.listen({ host: '127.0.0.1', port: 0 })
}, SLOW.PROCESS_MS)
afterAll(async () => {
  await app?.close()
  for (const child of children) child.kill('SIGKILL')
})

/** A desktop host on `toolgate mcp --upstreams`, answering questions with `answer` when given (else it declares no elicitation). */
async function host (answer?: (message: string) => Record<string, unknown>): Promise<{ client: Client, asked: string[] }> {
  const asked: string[] = []
  const client = new Client({ name: 'desktop-host', version: '1.0.0' }, answer === undefined ? {} : { capabilities: { elicitation: {} } })
  if (answer !== undefined) {
    client.setRequestHandler(ElicitRequestSchema, request => {
      asked.push(request.params.message)
      return answer(request.params.message) as never
    })
  }
  await client.connect(new StdioClientTransport({ command: process.execPath, args: ['dist/bin/toolgate.js', 'mcp', '--upstreams', file], cwd: root, stderr: 'ignore', env: { PATH: process.env.PATH ?? '', LOG_LEVEL: 'warn' } }))
  return { client, asked }
}

const textOf = (result: Awaited<ReturnType<Client['callTool']>>): string => (result.content as Array<{ text: string }>)[0]!.text

describe('elicitation from an upstream server, relayed', { timeout: SLOW.PROCESS_MS }, () => {
  it('reaches a stdio client that can answer, from a 2025 server and a 2026-07-28 server, and its answer goes back', async () => {
    const { client, asked } = await host(() => ({ action: 'accept', content: { name: 'Ada' } }))
    try {
      expect(textOf(await client.callTool({ name: 'up_ask', arguments: {} }))).toBe('hello Ada')
      expect(textOf(await client.callTool({ name: 'modern_ask', arguments: {} }))).toBe('hello Ada')
      expect(asked).toEqual(['Your name?', 'Your name?'])
    } finally {
      await client.close()
    }
  })

  it('a person who declines is a decline upstream', async () => {
    const { client } = await host(() => ({ action: 'decline' }))
    try {
      expect(textOf(await client.callTool({ name: 'up_ask', arguments: {} }))).toBe('no name: decline')
      expect(textOf(await client.callTool({ name: 'modern_ask', arguments: {} }))).toBe('no name: decline')
    } finally {
      await client.close()
    }
  })

  it('reaches a 2026-07-28 client as input_required on its own call, over HTTP and stdio, and its answer goes back', async () => {
    const asked: string[] = []
    const answering = (client: ModernClient): ModernClient => {
      client.setRequestHandler('elicitation/create', async request => {
        asked.push((request.params as { message: string }).message)
        return { action: 'accept', content: { name: 'Grace' } }
      })
      return client
    }
    const address = app.server.address() as { port: number }
    const overHttp = answering(new ModernClient({ name: 'modern-host', version: '1.0.0' }, { versionNegotiation: { mode: 'auto' }, capabilities: { elicitation: { form: {} } } }))
    const { StreamableHTTPClientTransport } = await import('@modelcontextprotocol/client')
    await overHttp.connect(new StreamableHTTPClientTransport(new URL(`http://127.0.0.1:${address.port}/mcp`), { requestInit: { headers: { 'x-api-key': KEYS.caller } } }))
    const overStdio = answering(new ModernClient({ name: 'modern-host', version: '1.0.0' }, { versionNegotiation: { mode: 'auto' }, capabilities: { elicitation: { form: {} } } }))
    await overStdio.connect(new ModernStdio({ command: process.execPath, args: ['dist/bin/toolgate.js', 'mcp', '--upstreams', file], cwd: root, stderr: 'ignore', env: { PATH: process.env.PATH ?? '', LOG_LEVEL: 'warn' } }))
    try {
      for (const client of [overHttp, overStdio]) {
        for (const tool of ['up_ask', 'modern_ask']) {
          const result = await client.callTool({ name: tool, arguments: {} })
          expect((result.content as Array<{ text: string }>)[0]!.text).toBe('hello Grace')
        }
      }
      expect(asked).toEqual(['Your name?', 'Your name?', 'Your name?', 'Your name?'])
      // A client that does not say it can answer is not asked.
      const silent = await modernClient(new URL(`http://127.0.0.1:${address.port}/mcp`), KEYS.caller)
      expect(((await silent.callTool({ name: 'up_ask', arguments: {} })).content as Array<{ text: string }>)[0]!.text).toBe('no name: decline')
      await silent.close()
    } finally {
      await Promise.all([overHttp.close(), overStdio.close()])
    }
  })

  it('a question\'s state is refused when forged, another caller\'s, or its call is gone', async () => {
    const address = app.server.address() as { port: number }
    const post = async (key: string, params: Record<string, unknown>): Promise<Record<string, any>> => {
      const response = await fetch(`http://127.0.0.1:${address.port}/mcp`, {
        method: 'POST',
        headers: { 'x-api-key': key, 'content-type': 'application/json', accept: 'application/json, text/event-stream', 'mcp-protocol-version': '2026-07-28', 'mcp-method': 'tools/call', 'mcp-name': 'up_ask' },
        body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'up_ask', arguments: {}, ...params, _meta: { 'io.modelcontextprotocol/protocolVersion': '2026-07-28', 'io.modelcontextprotocol/clientCapabilities': { elicitation: { form: {} } } } } }),
      })
      return await response.json() as Record<string, any>
    }
    const first = await post(KEYS.caller, {})
    expect(first.result).toMatchObject({ resultType: 'input_required', inputRequests: { question: { method: 'elicitation/create', params: { message: 'Your name?' } } } })
    const state = first.result.requestState as string
    expect((await post(KEYS.admin, { requestState: state, inputResponses: { question: { action: 'accept', content: { name: 'Eve' } } } })).error).toMatchObject({ code: -32602, message: expect.stringContaining('another caller') })
    expect((await post(KEYS.caller, { requestState: state.slice(0, -2) + 'AA', inputResponses: {} })).error).toMatchObject({ code: -32602 })
    // The answer goes back once; the same state again finds no call waiting.
    expect((await post(KEYS.caller, { requestState: state, inputResponses: { question: { action: 'accept', content: { name: 'Bob' } } } })).result.content[0].text).toBe('hello Bob')
    expect((await post(KEYS.caller, { requestState: state, inputResponses: {} })).error).toMatchObject({ code: -32602, message: expect.stringContaining('no longer waiting') })
  })

  it('a client that cannot answer makes the server see a decline at once, over stdio and over HTTP', async () => {
    const { client } = await host()
    try {
      const started = performance.now()
      expect(textOf(await client.callTool({ name: 'up_ask', arguments: {} }))).toBe('no name: decline')
      expect(textOf(await client.callTool({ name: 'modern_ask', arguments: {} }))).toBe('no name: decline')
      expect(performance.now() - started).toBeLessThan(5_000)
    } finally {
      await client.close()
    }
    const address = app.server.address() as { port: number }
    const remote = await sdkClient(new URL(`http://127.0.0.1:${address.port}/mcp`), KEYS.caller)
    try {
      expect(textOf(await remote.callTool({ name: 'up_ask', arguments: {} }))).toBe('no name: decline')
      expect(textOf(await remote.callTool({ name: 'modern_ask', arguments: {} }))).toBe('no name: decline')
    } finally {
      await remote.close()
    }
  })
})
