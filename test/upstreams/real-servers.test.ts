import { readFileSync, existsSync } from 'node:fs'
import { join } from 'node:path'
import { afterAll, describe, expect, it } from 'vitest'
import { Client } from '@modelcontextprotocol/sdk/client/index.js'
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js'
import type { FastifyInstance } from 'fastify'
import { buildApp } from '../../plugins/app.js'
import { loadConfig } from '../../src/services/config.js'
import { httpTools } from '../fixtures/http-tools.js'
import { API_KEYS, KEYS } from '../approvals/helpers.js'
import { SLOW } from '../slow.js'
import { EVERYTHING, FILESYSTEM, MEMORY, tempDir, upstreamsFile } from './helpers.js'

/*
 * The MCP servers people run, from npm, started by the gateway as its children: every face
 * serves their tools through the one pipeline.
 */

const folder = tempDir('toolgate-fs-')
const memoryFile = join(tempDir(), 'memory.jsonl')
const file = upstreamsFile({
  mcpServers: {
    everything: { command: process.execPath, args: [EVERYTHING, 'stdio'], env: { GIVEN_BY_FILE: 'from-the-file' } },
    memory: { command: process.execPath, args: [MEMORY], env: { MEMORY_FILE_PATH: memoryFile } },
    fs: { command: process.execPath, args: [FILESYSTEM, folder] },
  },
  rename: { 'everything/get-sum': 'add_numbers' },
  tools: {
    'memory_*': { effects: ['affects-others'] },
    fs_write_file: { effects: ['irreversible'], requiresApproval: "!input.path.endsWith('.log')" },
    fs_edit_file: { requiresApproval: true },
    everything_echo: { isReadOnly: true, isConcurrencySafe: true, effects: [], description: 'Echo a message back.' },
  },
})

let app: FastifyInstance
let url: string
const alice = { 'x-api-key': KEYS.alice }

async function gateway (): Promise<FastifyInstance> {
  // The gateway's own secret, in its environment: no child may see it.
  process.env.TOOLGATE_TEST_GATEWAY_SECRET = 'never-give-this-to-a-child'
  const config = loadConfig({}, { apiKeys: API_KEYS, upstreamsFile: file, port: 0 })
  app = await buildApp({ config, tools: httpTools })
  url = await app.listen({ host: '127.0.0.1', port: 0 })
  return app
}

afterAll(async () => {
  delete process.env.TOOLGATE_TEST_GATEWAY_SECRET
  await app?.close()
})

const post = async (tool: string, body: unknown, headers: Record<string, string> = {}) =>
  await app.inject({ method: 'POST', url: `/tools/${tool}`, payload: body as object, headers: { ...alice, ...headers } })

describe('real MCP servers behind the gateway', { timeout: SLOW.PROCESS_MS }, () => {
  it('lists every upstream tool beside the local ones, with its server, its own name and who declared each field', async () => {
    await gateway()
    const listing = (await app.inject({ method: 'GET', url: '/tools', headers: alice })).json<{ tools: Array<Record<string, any>> }>().tools
    const ids = listing.map(tool => tool.id)
    expect(ids).toContain('echo') // local
    expect(ids).toEqual(expect.arrayContaining(['everything_echo', 'add_numbers', 'memory_create_entities', 'memory_read_graph', 'fs_write_file', 'fs_read_text_file']))
    const echo = listing.find(tool => tool.id === 'everything_echo')!
    expect(echo.origin).toEqual({ type: 'mcp', server: 'everything', name: 'echo', declaredBy: expect.objectContaining({ isReadOnly: 'operator', effects: 'operator', description: 'operator' }) })
    expect(echo.description).toBe('Echo a message back.')
    const sum = listing.find(tool => tool.id === 'add_numbers')!
    expect(sum.origin).toMatchObject({ server: 'everything', name: 'get-sum' })
    const read = listing.find(tool => tool.id === 'memory_read_graph')!
    // The server's own hint, where the operator said nothing: and the listing says so.
    expect(read.flags.readOnly).toBe(true)
    expect(read.origin.declaredBy).toMatchObject({ isReadOnly: 'upstream', effects: 'operator' })
    expect(read.effects).toEqual(['affects-others'])
    expect(listing.find(tool => tool.id === 'fs_write_file')!.effects).toEqual(['irreversible'])
  })

  it('calls them over REST: validated input, the MCP content as the body, structured content where the tool declares an output schema', async () => {
    const echo = await post('everything_echo', { message: 'hello' })
    expect(echo.statusCode).toBe(200)
    expect(echo.json()).toEqual({ content: [{ type: 'text', text: 'Echo: hello' }] })
    const sum = await post('add_numbers', { a: 2, b: 40 })
    expect(sum.json().content[0].text).toContain('42')
    const bad = await post('add_numbers', { a: 'two' })
    expect(bad.statusCode).toBe(400)
    expect(bad.json().errors.map((e: { pointer: string }) => e.pointer).sort()).toEqual(['/a', '/b'])
    const created = await post('memory_create_entities', { entities: [{ name: 'toolgate', entityType: 'project', observations: ['fronts MCP servers'] }] })
    expect(created.statusCode).toBe(200)
    expect(created.json()).toEqual({ entities: [{ name: 'toolgate', entityType: 'project', observations: ['fronts MCP servers'] }] })
    const graph = await post('memory_read_graph', {})
    expect(graph.json().entities).toEqual([expect.objectContaining({ name: 'toolgate' })])
    expect(existsSync(memoryFile)).toBe(true)
  })

  it('gives a child only what the file gives it plus a minimal base: never the gateway\'s own environment', async () => {
    const env = await post('everything_get_env', {})
    expect(env.statusCode).toBe(200)
    const text = (env.json().content as Array<{ text: string }>).map(block => block.text).join('\n')
    expect(text).toContain('GIVEN_BY_FILE')
    expect(text).toContain('PATH')
    expect(text).not.toContain('TOOLGATE_TEST_GATEWAY_SECRET')
    expect(text).not.toContain('never-give-this-to-a-child')
  })

  it('puts server-filesystem\'s writes behind the operator\'s CEL approval rule: nothing is written until a person approves, then once', async () => {
    const path = join(folder, 'plan.txt')
    const asked = await post('fs_write_file', { path, content: 'ship it' })
    expect(asked.statusCode).toBe(202)
    expect(asked.headers.location).toMatch(/^\/approvals\//)
    expect(existsSync(path)).toBe(false)
    const { id } = asked.json<{ id: string }>()
    const approved = await app.inject({ method: 'POST', url: `/approvals/${id}/approve`, headers: { 'x-api-key': KEYS.bob } })
    expect(approved.statusCode).toBe(200)
    const ran = await post('fs_write_file', { path, content: 'ship it' }, { 'approval-id': id })
    expect(ran.statusCode).toBe(200)
    expect(readFileSync(path, 'utf8')).toBe('ship it')
    // The rule does not match a .log file: written at once.
    const log = await post('fs_write_file', { path: join(folder, 'run.log'), content: 'x' })
    expect(log.statusCode).toBe(200)
    // A dry run answers the request that would be sent, and sends nothing.
    const dry = await app.inject({ method: 'POST', url: '/tools/fs_write_file?dryRun=true', payload: { path: join(folder, 'dry.log'), content: 'x' }, headers: alice })
    expect(dry.statusCode).toBe(200)
    expect(dry.json()).toMatchObject({ upstream: 'fs', method: 'tools/call', params: { name: 'write_file', arguments: { path: join(folder, 'dry.log') } } })
    expect(existsSync(join(folder, 'dry.log'))).toBe(false)
  })

  it('serves them on its own POST /mcp beside the local tools, to the MCP SDK client', async () => {
    const client = new Client({ name: 'test', version: '1.0.0' })
    await client.connect(new StreamableHTTPClientTransport(new URL(`${url}/mcp`), { requestInit: { headers: alice } }))
    const { tools } = await client.listTools()
    const byName = new Map(tools.map(tool => [tool.name, tool]))
    expect(byName.has('echo')).toBe(true)
    expect(byName.get('everything_echo')!._meta!['dev.toolgate/declaration']).toMatchObject({ origin: { server: 'everything', name: 'echo' } })
    const result = await client.callTool({ name: 'add_numbers', arguments: { a: 1, b: 2 } })
    expect(result.isError).toBe(false)
    expect(JSON.stringify(result)).toContain('3')
    await client.close()
  })
})
