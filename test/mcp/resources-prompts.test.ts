import type { ChildProcess } from 'node:child_process'
import { mkdtempSync, readFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { Client as DirectClient } from '@modelcontextprotocol/sdk/client/index.js'
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js'
import type { FastifyInstance } from 'fastify'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { buildApp } from '../../plugins/app.js'
import { loadConfig } from '../../src/services/config.js'
import { API_KEYS, auth, KEYS } from '../http/helpers.js'
import { SLOW } from '../slow.js'
import { fileURLToPath } from 'node:url'
import { Client as ModernClient } from '@modelcontextprotocol/client'
import { StdioClientTransport as ModernStdio } from '@modelcontextprotocol/client/stdio'
import { bothEras, directEverything, EVERYTHING_SERVER, fixture, linesOf, tempDir, upstreamsFile } from '../upstreams/helpers.js'
import { modernClient, sdkClient } from './helpers.js'

/*
 * An upstream MCP server's resources, resource templates and prompts on the gateway's MCP face,
 * as server-everything (stdio, 2025-11-25) and a 2026-07-28 fixture server (HTTP) offer them,
 * for clients of both eras: listed per caller under the operator's rules, read and got through
 * the pipeline (metrics, audit), answered as the server sent them.
 */

const HIDDEN_DOC = 'demo://resource/static/document/extension.md'
const children: ChildProcess[] = []
let app: FastifyInstance
let url: URL
let direct: DirectClient
let auditFile: string
let stdioFile: string

beforeAll(async () => {
  const file = upstreamsFile({
    mcpServers: await bothEras(children),
    resources: { [HIDDEN_DOC]: { active: '\'tools:escalate\' in principal.scopes' } },
    prompts: { 'everything_completable_*': { active: false } },
  })
  stdioFile = upstreamsFile({ mcpServers: { everything: EVERYTHING_SERVER }, prompts: { 'everything_completable_*': { active: false } } })
  auditFile = join(mkdtempSync(join(tmpdir(), 'toolgate-audit-')), 'audit.log')
  app = await buildApp({ config: loadConfig({}, { apiKeys: API_KEYS, upstreamsFile: file, auditLog: auditFile }), tools: [] })
  url = new URL(`${await app.listen({ host: '127.0.0.1', port: 0 })}/mcp`)
  direct = await directEverything()
}, SLOW.PROCESS_MS)
afterAll(async () => {
  await direct?.close()
  await app?.close()
  for (const child of children) child.kill('SIGKILL')
})

describe('resources and prompts of upstream servers over MCP', { timeout: SLOW.PROCESS_MS }, () => {
  it('lists every server\'s resources and templates as it sent them, its name in _meta, and hides what the rules hide', async () => {
    const client = await sdkClient(url, KEYS.caller)
    const { resources } = await client.listResources()
    const { resources: theirs } = await direct.listResources()
    const everything = resources.filter(resource => (resource._meta?.['dev.toolgate/upstream'] as { server: string }).server === 'everything')
    expect(everything.map(({ _meta, ...rest }) => rest)).toEqual(theirs.filter(resource => resource.uri !== HIDDEN_DOC))
    expect(resources.map(resource => resource.uri)).toContain('note://modern/readme')
    const { resourceTemplates } = await client.listResourceTemplates()
    expect(resourceTemplates.map(template => template.uriTemplate)).toEqual(expect.arrayContaining((await direct.listResourceTemplates()).resourceTemplates.map(template => template.uriTemplate)))
    // An admin's rule lets it see the document the caller does not.
    const admin = await sdkClient(url, KEYS.admin)
    expect((await admin.listResources()).resources.map(resource => resource.uri)).toContain(HIDDEN_DOC)
    await Promise.all([client.close(), admin.close()])
  })

  it('reads a listed resource, a templated text one and a binary blob exactly as the server answers them, in both eras', async () => {
    const legacy = await sdkClient(url, KEYS.caller)
    const modern = await modernClient(url, KEYS.caller)
    const uri = 'demo://resource/static/document/architecture.md'
    const theirs = await direct.readResource({ uri })
    expect(await legacy.readResource({ uri })).toEqual(theirs)
    expect((await modern.readResource({ uri })).contents).toEqual(theirs.contents)
    for (const made of ['demo://resource/dynamic/text/7', 'demo://resource/dynamic/blob/3']) {
      const fresh = timeless((await direct.readResource({ uri: made })).contents)
      expect(timeless((await legacy.readResource({ uri: made })).contents)).toEqual(fresh)
      expect(timeless((await modern.readResource({ uri: made })).contents)).toEqual(fresh)
    }
    expect((await modern.readResource({ uri: 'note://modern/readme' })).contents).toEqual([{ uri: 'note://modern/readme', mimeType: 'text/plain', text: 'served by a 2026-07-28 server' }])
    await Promise.all([legacy.close(), modern.close()])
  })

  it('lists prompts by id and gets one with the server\'s own messages, its arguments checked against its declaration first', async () => {
    const client = await sdkClient(url, KEYS.caller)
    const modern = await modernClient(url, KEYS.caller)
    const { prompts } = await client.listPrompts()
    const names = prompts.map(prompt => prompt.name)
    expect(names).toEqual(expect.arrayContaining(['everything_simple_prompt', 'everything_args_prompt', 'modern_greet']))
    expect(names).not.toContain('everything_completable_prompt')
    expect(prompts.find(prompt => prompt.name === 'everything_args_prompt')?._meta).toEqual({ 'dev.toolgate/upstream': { server: 'everything', name: 'args-prompt' } })
    const theirs = await direct.getPrompt({ name: 'args-prompt', arguments: { city: 'Paris' } })
    expect(await client.getPrompt({ name: 'everything_args_prompt', arguments: { city: 'Paris' } })).toEqual(theirs)
    expect((await modern.getPrompt({ name: 'everything_args_prompt', arguments: { city: 'Paris' } })).messages).toEqual(theirs.messages)
    expect((await modern.getPrompt({ name: 'modern_greet', arguments: { who: 'Ada' } })).messages).toEqual([{ role: 'user', content: { type: 'text', text: 'Greet Ada.' } }])
    await Promise.all([client.close(), modern.close()])
  })

  it('refuses bad input before anything is sent: unknown, hidden, malformed, off the prompt\'s own arguments', async () => {
    const rpc = async (method: string, params: Record<string, unknown>, key: string = KEYS.caller): Promise<{ error?: { code: number, message: string, data?: unknown }, result?: unknown }> => {
      const response = await fetch(url, { method: 'POST', headers: { ...auth(key), 'content-type': 'application/json', accept: 'application/json, text/event-stream', 'mcp-protocol-version': '2025-11-25' }, body: JSON.stringify({ jsonrpc: '2.0', id: 1, method, params }) })
      return await response.json() as never
    }
    expect((await rpc('resources/read', { uri: 'demo://nowhere/1' })).error).toMatchObject({ code: -32002, data: { uri: 'demo://nowhere/1' } })
    expect((await rpc('resources/read', { uri: HIDDEN_DOC })).error).toMatchObject({ code: -32002 })
    expect((await rpc('resources/read', { uri: 42 })).error).toMatchObject({ code: -32602, data: { errors: [{ pointer: '/params/uri' }] } })
    expect((await rpc('prompts/get', { name: 'everything_completable_prompt', arguments: {} })).error).toMatchObject({ code: -32602, message: 'unknown prompt: everything_completable_prompt' })
    expect((await rpc('prompts/get', { name: 'everything_args_prompt', arguments: {} })).error).toMatchObject({ code: -32602, data: { errors: [{ pointer: '/params/arguments/city', message: 'argument "city" is required' }] } })
    expect((await rpc('prompts/get', { name: 'everything_args_prompt', arguments: { city: 'Paris', country: 'FR' } })).error).toMatchObject({ code: -32602, data: { errors: [{ pointer: '/params/arguments/country' }] } })
    expect((await rpc('prompts/get', { name: 'everything_args_prompt', arguments: { city: 7 } })).error).toMatchObject({ code: -32602, data: { errors: [{ pointer: '/params/arguments/city' }] } })
    expect((await rpc('prompts/get', { name: 'everything_args_prompt', arguments: [] })).error).toMatchObject({ code: -32602 })
    // A reader may list, not read: reading runs something upstream.
    expect((await rpc('resources/list', {}, KEYS.reader)).result).toMatchObject({ resources: expect.any(Array) })
    expect((await rpc('resources/read', { uri: 'demo://resource/dynamic/text/1' }, KEYS.reader))).toMatchObject({ status: 403, code: 'TOOLGATE_FORBIDDEN' })
  })

  it('counts and audits a read and a get as calls of the server\'s read-only tools', async () => {
    const client = await sdkClient(url, KEYS.caller)
    await client.readResource({ uri: 'demo://resource/dynamic/text/2' })
    await client.getPrompt({ name: 'everything_simple_prompt' })
    await client.close()
    const metrics = await (await fetch(new URL('/metrics', url), { headers: auth(KEYS.admin) })).text()
    expect(metrics).toMatch(/toolgate_tool_calls_total\{tool="everything_mcp_resources_read",kind="resource",effects="none",transport="mcp",outcome="ok"\} [1-9]/)
    expect(metrics).toMatch(/toolgate_tool_calls_total\{tool="everything_mcp_prompts_get",kind="prompt",effects="none",transport="mcp",outcome="ok"\} [1-9]/)
    // The trail writes in bursts: what this test made is there once written.
    await expect.poll(() => auditLines().filter(line => line.principal === 'caller').map(line => line.tool), { timeout: 5_000 }).toEqual(expect.arrayContaining(['everything_mcp_resources_read', 'everything_mcp_prompts_get']))
    // Refused reads (the test before) never became calls: only the ones that ran are there.
    expect(auditLines().filter(line => line.tool === 'everything_mcp_resources_read' && line.principal === 'caller').every(line => line.status === 200)).toBe(true)
  })
})

describe('a client\'s cancel of a read', { timeout: SLOW.PROCESS_MS }, () => {
  it('reaches the upstream server as notifications/cancelled', async () => {
    const dir = tempDir()
    const slow = await buildApp({ config: loadConfig({}, { apiKeys: API_KEYS, upstreamsFile: upstreamsFile({ mcpServers: { up: fixture(dir) } }) }), tools: [] })
    try {
      const client = await sdkClient(new URL(`${await slow.listen({ host: '127.0.0.1', port: 0 })}/mcp`), KEYS.caller)
      const controller = new AbortController()
      const reading = client.readResource({ uri: 'fixture://slow' }, { signal: controller.signal }).catch((error: unknown) => error)
      await expect.poll(() => linesOf(dir, 'calls.log').some(line => line.includes('fixture://slow')), { timeout: 5_000 }).toBe(true)
      controller.abort()
      await reading
      await expect.poll(() => linesOf(dir, 'cancelled.log'), { timeout: 5_000 }).toContain('fixture://slow')
      // A URI the server reads without listing it (as a tool's resource_link may name one) goes to the only server that reads.
      expect((await client.readResource({ uri: 'fixture://echo/hello' })).contents).toEqual([{ uri: 'fixture://echo/hello', mimeType: 'text/plain', text: 'hello' }])
      await client.close()
    } finally {
      await slow.close()
    }
  })
})

describe('a resource larger than MAX_RESPONSE_BYTES', { timeout: SLOW.PROCESS_MS }, () => {
  it('fails its own read with the problem REST would answer; the connection and other reads carry on', async () => {
    // server-everything's tool list (about 7.7 kB) fits; its features.md (about 10 kB) does not.
    const bounded = await buildApp({ config: loadConfig({}, { apiKeys: API_KEYS, upstreamsFile: stdioFile, maxResponseBytes: 9_000 }), tools: [] })
    try {
      const client = await sdkClient(new URL(`${await bounded.listen({ host: '127.0.0.1', port: 0 })}/mcp`), KEYS.caller)
      const failure = await client.readResource({ uri: 'demo://resource/static/document/features.md' }).then(() => undefined, (error: unknown) => error)
      expect(failure).toMatchObject({ code: -32603, data: { problem: { status: 502, code: 'TOOLGATE_UPSTREAM_FAILED', detail: expect.stringContaining('larger than the gateway\'s limit of 9000 bytes') } } })
      expect((await client.readResource({ uri: 'demo://resource/static/document/architecture.md' })).contents[0]).toMatchObject({ mimeType: 'text/markdown' })
      expect(await client.callTool({ name: 'everything_echo', arguments: { message: 'still here' } })).toMatchObject({ isError: false })
      // The only server that reads resources is asked for a URI it does not list (a tool's resource_link may name one).
      const unlisted = await client.readResource({ uri: 'demo://resource/unlisted/1' }).then(() => undefined, (error: unknown) => error)
      expect(unlisted).toMatchObject({ code: -32002, data: { uri: 'demo://resource/unlisted/1' } })
      await client.close()
    } finally {
      await bounded.close()
    }
  })
})

describe('resources and prompts over stdio (toolgate mcp --upstreams)', { timeout: SLOW.PROCESS_MS }, () => {
  it('serves them to clients of both eras as over HTTP', async () => {
    const root = fileURLToPath(new URL('../../', import.meta.url))
    const command = { command: process.execPath, args: ['dist/bin/toolgate.js', 'mcp', '--upstreams', stdioFile], cwd: root, stderr: 'ignore' as const, env: { PATH: process.env.PATH ?? '', LOG_LEVEL: 'warn' } }
    const legacy = new DirectClient({ name: 'stdio-legacy', version: '1.0.0' })
    await legacy.connect(new StdioClientTransport(command))
    const modern = new ModernClient({ name: 'stdio-modern', version: '1.0.0' }, { versionNegotiation: { mode: 'auto' } })
    await modern.connect(new ModernStdio(command))
    try {
      expect(legacy.getServerCapabilities()).toMatchObject({ resources: {}, prompts: {} })
      const uri = 'demo://resource/dynamic/blob/5'
      const theirs = timeless((await direct.readResource({ uri })).contents)
      expect(timeless((await legacy.readResource({ uri })).contents)).toEqual(theirs)
      expect(timeless((await modern.readResource({ uri })).contents)).toEqual(theirs)
      expect((await modern.listPrompts()).prompts.map(prompt => prompt.name)).not.toContain('everything_completable_prompt')
      expect((await legacy.getPrompt({ name: 'everything_simple_prompt' })).messages).toEqual((await direct.getPrompt({ name: 'simple-prompt' })).messages)
    } finally {
      await Promise.all([legacy.close(), modern.close()])
    }
  })
})

/** server-everything makes its dynamic resources with the time of day in them: the rest must be the same. */
function timeless (contents: ReadonlyArray<Record<string, unknown>>): unknown[] {
  const clock = /\d{1,2}:\d{2}:\d{2}( [AP]M)?/g
  return contents.map(({ blob, text, ...rest }) => ({
    ...rest,
    ...(typeof text === 'string' ? { text: text.replace(clock, 'TIME') } : {}),
    ...(typeof blob === 'string' ? { blob: Buffer.from(blob, 'base64').toString('utf8').replace(clock, 'TIME') } : {}),
  }))
}

function auditLines (): Array<Record<string, unknown>> {
  try {
    return readFileSync(auditFile, 'utf8').split('\n').filter(line => line !== '').map(line => JSON.parse(line) as Record<string, unknown>)
  } catch {
    return []
  }
}
