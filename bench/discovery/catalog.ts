/**
 * The catalog tool discovery is measured on, built without the search engine: the shipped
 * tools (`tools/`), three MCP servers from npm (server-everything, server-filesystem,
 * server-memory, over stdio) and the operations of 39 OpenAPI documents of
 * `@readme/oas-examples`, all named in `upstreams.json` beside this file. Nothing is called: the
 * services' base URL is a closed port.
 *
 *   const { app, tools, close } = await startDiscoveryCatalog()
 *
 * `tasks.json` holds the plain-language tasks and the tool each intends
 * (test/bench/discovery-set.test.ts checks both against this catalog).
 */
import { fileURLToPath } from 'node:url'
import type { FastifyInstance } from 'fastify'
import { buildApp } from '../../plugins/app.js'
import { hashApiKey } from '../../src/services/auth/api-keys.js'
import { loadConfig } from '../../src/services/config.js'
import { loadToolsFromDir } from '../../src/services/loading/loader.js'

export const DISCOVERY_UPSTREAMS = fileURLToPath(new URL('./upstreams.json', import.meta.url))
export const DISCOVERY_TASKS = fileURLToPath(new URL('./tasks.json', import.meta.url))
const TOOLS_DIR = fileURLToPath(new URL('../../tools', import.meta.url))

/** The key every request of the bench sends: a principal that may read and call tools. */
export const DISCOVERY_API_KEY = 'discovery-key-0123456789abcdef'
const HEADERS = { 'x-api-key': DISCOVERY_API_KEY }
const MCP_HEADERS = { ...HEADERS, 'content-type': 'application/json', accept: 'application/json, text/event-stream' }

/** One tool as `GET /tools` lists it. */
export interface CatalogTool {
  readonly id: string
  readonly kind: string
  readonly description: string
  readonly shortDescription?: string
  readonly effects: readonly string[]
  readonly inputSchema: Record<string, unknown>
  readonly outputSchema?: Record<string, unknown>
}

/** One task of `tasks.json`: what a person or an agent asks, and the tool meant to serve it. */
export interface DiscoveryTask {
  readonly task: string
  readonly tool: string
}

export interface DiscoveryCatalog {
  /** The gateway, in process, never listening. */
  readonly app: FastifyInstance
  /** Every tool of the catalog, as `GET /tools` lists them, in catalog order. */
  readonly tools: readonly CatalogTool[]
  /** Closes the gateway and stops the MCP servers it started. */
  readonly close: () => Promise<void>
}

interface UpstreamStatus { readonly name: string, readonly state: string, readonly tools: number, readonly lastError?: string }

/** Start the gateway with the shipped tools and every upstream of `upstreams.json`; resolves once each upstream is up and its tools are listed. */
export async function startDiscoveryCatalog (options: { readonly timeoutMs?: number } = {}): Promise<DiscoveryCatalog> {
  const config = loadConfig({}, {
    logLevel: 'error',
    apiKeys: [{ principal: 'discovery', sha256: hashApiKey(DISCOVERY_API_KEY), scopes: ['tools:read', 'tools:call'] }],
    upstreamsFile: DISCOVERY_UPSTREAMS,
  })
  const app = await buildApp({ config, tools: await loadToolsFromDir(TOOLS_DIR), logger: { level: config.logLevel } })
  try {
    const until = Date.now() + (options.timeoutMs ?? 30_000)
    for (;;) {
      const upstreams = (await app.inject({ method: 'GET', url: '/upstreams', headers: HEADERS })).json<{ upstreams: UpstreamStatus[] }>().upstreams
      const waiting = upstreams.filter(upstream => upstream.state !== 'up' || upstream.tools === 0)
      if (waiting.length === 0) break
      if (Date.now() > until) throw new Error(`upstreams not up: ${waiting.map(upstream => `${upstream.name} (${upstream.state}${upstream.lastError === undefined ? '' : `: ${upstream.lastError}`})`).join(', ')}`)
      await new Promise(resolve => setTimeout(resolve, 50))
    }
    const listed = await app.inject({ method: 'GET', url: '/tools', headers: HEADERS })
    if (listed.statusCode !== 200) throw new Error(`GET /tools answered ${listed.statusCode}: ${listed.body}`)
    const tools = listed.json<{ tools: CatalogTool[] }>().tools
    return { app, tools, close: async () => { await app.close() } }
  } catch (error) {
    await app.close()
    throw error
  }
}

export interface McpListing {
  /** The whole JSON-RPC answer to `tools/list`, as sent. */
  readonly body: string
  /** Its size in UTF-8 bytes. */
  readonly bytes: number
  /** Each tool's entry of the listing, by name, with its size in UTF-8 bytes (serialized alone). */
  readonly tools: ReadonlyArray<{ readonly name: string, readonly bytes: number, readonly entry: Record<string, unknown> }>
}

/** The catalog's MCP `tools/list` (POST /mcp), what an MCP client loads into its context without discovery. */
export async function mcpToolsList (app: FastifyInstance): Promise<McpListing> {
  const res = await app.inject({ method: 'POST', url: '/mcp', headers: MCP_HEADERS, payload: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list', params: {} }) })
  if (res.statusCode !== 200) throw new Error(`tools/list answered ${res.statusCode}: ${res.body.slice(0, 500)}`)
  const entries = res.json<{ result: { tools: Array<Record<string, unknown> & { name: string }> } }>().result.tools
  return {
    body: res.body,
    bytes: Buffer.byteLength(res.body),
    tools: entries.map(entry => ({ name: entry.name, bytes: Buffer.byteLength(JSON.stringify(entry)), entry })),
  }
}
