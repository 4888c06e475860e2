import type { AddressInfo } from 'node:net'
import { setTimeout as sleep } from 'node:timers/promises'
import { Client } from '@modelcontextprotocol/sdk/client/index.js'
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js'
import { Client as ModernClient, StreamableHTTPClientTransport as ModernTransport } from '@modelcontextprotocol/client'
import { z } from 'zod'
import { defineTool } from '../../src/index.js'
import { httpTools } from '../fixtures/http-tools.js'
import { auth, KEYS, testApp } from '../http/helpers.js'

/** Calls of `wait_for_abort` that began: a test cancels one once it runs, however slow the machine. */
export const started: string[] = []

/** Calls of `wait_for_abort` that saw their signal abort: proves cancellation reached the tool. */
export const aborted: string[] = []

/** The HTTP fixtures plus tools whose declarations exercise every MCP annotation and shape. */
export const mcpTools = [
  ...httpTools,
  defineTool({
    id: 'pay_out', kind: 'network', description: 'Send money to an outside account.', isReadOnly: false, isConcurrencySafe: false,
    effects: ['external', 'financial'], authorize () {},
    inputSchema: z.object({ cents: z.number().int().positive() }), outputSchema: z.object({ sent: z.number() }),
    execute: ({ cents }) => ({ sent: cents }),
  }),
  defineTool({
    id: 'wait_for_abort', kind: 'read', description: 'Waits until its call is aborted.', isReadOnly: true, isConcurrencySafe: true,
    authorize () {}, timeoutMs: 10_000,
    inputSchema: z.object({ tag: z.string() }), outputSchema: z.object({ never: z.boolean() }),
    execute: async ({ tag }, ctx) => {
      started.push(tag)
      try {
        await sleep(10_000, undefined, { signal: ctx.signal })
      } catch {
        aborted.push(tag)
      }
      return { never: false }
    },
  }),
  defineTool({
    id: 'shout', kind: 'read', description: 'Takes a bare string: no function-call face.', isReadOnly: true, isConcurrencySafe: true, authorize () {},
    inputSchema: z.string(), outputSchema: z.string(), execute: text => text.toUpperCase(),
  }),
  defineTool({
    id: 'say', kind: 'read', description: 'Answers a bare string.', isReadOnly: true, isConcurrencySafe: true, authorize () {},
    inputSchema: z.object({}), outputSchema: z.string(), execute: () => 'hello',
  }),
]

/** A real listening gateway with the MCP fixtures; closed after the test by the HTTP helpers. */
export async function listeningGateway (overrides: Parameters<typeof testApp>[0] = {}): Promise<{ url: URL, app: Awaited<ReturnType<typeof testApp>> }> {
  const app = await testApp(overrides, mcpTools)
  await app.listen({ host: '127.0.0.1', port: 0 })
  const { port } = app.server.address() as AddressInfo
  return { url: new URL(`http://127.0.0.1:${port}/mcp`), app }
}

/** The official SDK client over Streamable HTTP, with an API key. */
export async function sdkClient (url: URL, key: string = KEYS.caller): Promise<Client> {
  const client = new Client({ name: 'toolgate-test', version: '1.0.0' })
  await client.connect(new StreamableHTTPClientTransport(url, { requestInit: { headers: auth(key) } }))
  return client
}

/** The 2.x client, negotiating the revision (2026-07-28 here) with `server/discover` at connect. */
export async function modernClient (url: URL, key: string = KEYS.caller, options: ConstructorParameters<typeof ModernClient>[1] = {}): Promise<ModernClient> {
  const client = new ModernClient({ name: 'toolgate-modern-test', version: '1.0.0' }, { versionNegotiation: { mode: 'auto' }, ...options })
  await client.connect(new ModernTransport(url, { requestInit: { headers: auth(key) } }))
  return client
}
