import { mkdtempSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { afterEach, describe, expect, it } from 'vitest'
import { SLOW } from '../slow.js'
import { Client } from '@modelcontextprotocol/sdk/client/index.js'
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js'
import { Client as ModernClient } from '@modelcontextprotocol/client'
import { StdioClientTransport as ModernStdio } from '@modelcontextprotocol/client/stdio'

/*
 * The built command, as a desktop host launches it (run `npm run build` first; `npm test`
 * does). The official SDK client speaks to it over the process's stdin and stdout.
 */
const root = fileURLToPath(new URL('../../', import.meta.url))
const clients: Client[] = []
afterEach(async () => { await Promise.all(clients.splice(0).map(async client => { await client.close() })) })

async function stdioClient (env: Record<string, string> = {}): Promise<{ client: Client, stderr: () => string }> {
  const transport = new StdioClientTransport({
    command: process.execPath,
    args: ['dist/bin/toolgate.js', 'mcp', 'test/fixtures/mcp-stdio-tools'],
    cwd: root,
    stderr: 'pipe',
    env: { PATH: process.env.PATH ?? '', LOG_LEVEL: 'warn', ...env },
  })
  let err = ''
  transport.stderr?.on('data', (chunk: Buffer) => { err += chunk.toString() })
  const client = new Client({ name: 'toolgate-stdio-test', version: '1.0.0' })
  await client.connect(transport)
  clients.push(client)
  return { client, stderr: () => err }
}

describe('toolgate mcp: MCP over stdio with the official SDK client', { timeout: SLOW.PROCESS_MS }, () => {
  it('lists the folder\'s tools with annotations from their declarations', async () => {
    const { client } = await stdioClient()
    expect(client.getServerVersion()?.name).toBe('toolgate')
    const { tools } = await client.listTools()
    expect(tools.map(tool => tool.name)).toEqual(['echo', 'delete_file', 'hang', 'wait_for_abort', 'count'])
    expect(tools[1]!.annotations).toMatchObject({ readOnlyHint: false, destructiveHint: true, openWorldHint: false })
    expect(tools[0]!.annotations).toMatchObject({ readOnlyHint: true, idempotentHint: true })
  })

  it('serves discovery mode with MCP_DISCOVERY=on: three tools listed, a tool found and called through them', async () => {
    const { client } = await stdioClient({ MCP_DISCOVERY: 'on' })
    expect((await client.listTools()).tools.map(tool => tool.name)).toEqual(['search_tools', 'describe_tool', 'call_tool'])
    const found = await client.callTool({ name: 'search_tools', arguments: { query: 'echo', limit: 1 } })
    expect(found.structuredContent).toMatchObject({ tools: [{ name: 'echo' }] })
    expect((await client.callTool({ name: 'call_tool', arguments: { name: 'echo', arguments: { text: 'hey' } } })).structuredContent).toEqual({ text: 'hey', length: 3 })
  })

  it('calls a tool, and answers a tool error, bad input and a timeout as isError results', async () => {
    const { client } = await stdioClient()
    expect((await client.callTool({ name: 'echo', arguments: { text: 'hey' } })).structuredContent).toEqual({ text: 'hey', length: 3 })
    const refused = await client.callTool({ name: 'delete_file', arguments: { path: '/x' } })
    expect(refused).toMatchObject({ isError: true, _meta: { 'dev.toolgate/problem': { status: 409, code: 'FILE_LOCKED' } } })
    const bad = await client.callTool({ name: 'echo', arguments: { text: 3 } })
    expect(bad).toMatchObject({ isError: true, _meta: { 'dev.toolgate/problem': { status: 400, code: 'TOOLGATE_INVALID_INPUT' } } })
    const late = await client.callTool({ name: 'hang', arguments: {} })
    expect(late).toMatchObject({ isError: true, _meta: { 'dev.toolgate/problem': { status: 504 } } })
    await expect(client.callTool({ name: 'nope', arguments: {} })).rejects.toThrow(/unknown tool/)
  })

  it('aborts the tool signal on notifications/cancelled', async () => {
    const { client, stderr } = await stdioClient()
    const controller = new AbortController()
    const call = client.callTool({ name: 'wait_for_abort', arguments: { tag: 'stdio-1' } }, undefined, { signal: controller.signal })
    await expect.poll(() => stderr(), { timeout: 10_000 }).toContain('STARTED stdio-1') // cancel it once it runs
    controller.abort('user pressed stop')
    await expect(call).rejects.toThrow()
    await expect.poll(() => stderr(), { timeout: 5000 }).toContain('ABORTED stdio-1')
  })
})

describe('toolgate mcp: revision 2026-07-28 over stdio with the 2.x client', { timeout: SLOW.PROCESS_MS }, () => {
  it('negotiates 2026-07-28 and calls a tool', async () => {
    const client = new ModernClient({ name: 'toolgate-modern-stdio', version: '1.0.0' }, { versionNegotiation: { mode: 'auto' } })
    await client.connect(new ModernStdio({ command: process.execPath, args: ['dist/bin/toolgate.js', 'mcp', 'test/fixtures/mcp-stdio-tools'], cwd: root, stderr: 'pipe', env: { PATH: process.env.PATH ?? '' } }))
    try {
      expect(client.getNegotiatedProtocolVersion()).toBe('2026-07-28')
      expect((await client.listTools()).tools.map(tool => tool.name)).toContain('echo')
      expect((await client.callTool({ name: 'echo', arguments: { text: 'v2' } })).structuredContent).toEqual({ text: 'v2', length: 2 })
    } finally {
      await client.close()
    }
  })
})

describe('toolgate mcp: progress over stdio', { timeout: SLOW.PROCESS_MS }, () => {
  it('tells both eras\' clients of a tool\'s progress when they ask, in order, before the result; not when they do not', async () => {
    const { client: legacy } = await stdioClient()
    const modern = new ModernClient({ name: 'toolgate-modern-progress', version: '1.0.0' }, { versionNegotiation: { mode: 'auto' } })
    await modern.connect(new ModernStdio({ command: process.execPath, args: ['dist/bin/toolgate.js', 'mcp', 'test/fixtures/mcp-stdio-tools'], cwd: root, stderr: 'ignore', env: { PATH: process.env.PATH ?? '' } }))
    try {
      const legacyHeard: Array<{ progress: number, total?: number, message?: string }> = []
      const viaLegacy = await legacy.callTool({ name: 'count', arguments: { n: 3 } }, undefined, { onprogress: update => { legacyHeard.push(update) } })
      expect(viaLegacy.structuredContent).toEqual({ counted: 3, listened: true })
      expect(legacyHeard).toEqual([1, 2, 3].map(i => ({ progress: i, total: 3, message: `item ${i}` })))
      const modernHeard: number[] = []
      const viaModern = await modern.callTool({ name: 'count', arguments: { n: 3 } }, { onprogress: update => { modernHeard.push(update.progress) } })
      expect(viaModern.structuredContent).toEqual({ counted: 3, listened: true })
      expect(modernHeard).toEqual([1, 2, 3])
      // Not asked for: the tool sees no ctx.progress, and nothing is sent.
      expect((await legacy.callTool({ name: 'count', arguments: { n: 1 } })).structuredContent).toEqual({ counted: 1, listened: false })
    } finally {
      await modern.close()
    }
  })
})

describe('toolgate mcp: an approval nobody here can decide', { timeout: SLOW.PROCESS_MS }, () => {
  /** A config file asking for approval of every call of `delete_file`; no REDIS_URL. */
  function configFile (): string {
    const dir = mkdtempSync(join(tmpdir(), 'toolgate-stdio-approvals-'))
    const path = join(dir, 'config.json')
    writeFileSync(path, JSON.stringify({ approvalRules: [{ tools: ['delete_file'] }] }))
    return path
  }

  it('answers at once, in both eras, that nobody can decide it and how to make it decidable; nothing runs', async () => {
    const env = { PATH: process.env.PATH ?? '', CONFIG_FILE: configFile(), LOG_LEVEL: 'warn' }
    const legacy = new Client({ name: 'toolgate-stdio-approvals', version: '1.0.0' })
    await legacy.connect(new StdioClientTransport({ command: process.execPath, args: ['dist/bin/toolgate.js', 'mcp', 'test/fixtures/mcp-stdio-tools'], cwd: root, stderr: 'ignore', env }))
    const modern = new ModernClient({ name: 'toolgate-stdio-approvals-2', version: '1.0.0' }, { versionNegotiation: { mode: 'auto' } })
    await modern.connect(new ModernStdio({ command: process.execPath, args: ['dist/bin/toolgate.js', 'mcp', 'test/fixtures/mcp-stdio-tools'], cwd: root, stderr: 'ignore', env }))
    try {
      for (const client of [legacy, modern] as const) {
        const started = performance.now()
        const result = await (client as Client).callTool({ name: 'delete_file', arguments: { path: '/x' } })
        expect(performance.now() - started).toBeLessThan(5_000)
        expect(result).toMatchObject({ isError: true, _meta: { 'dev.toolgate/problem': { status: 403, code: 'TOOLGATE_APPROVAL_UNDECIDABLE', detail: expect.stringContaining('REDIS_URL') } } })
      }
    } finally {
      await legacy.close()
      await modern.close()
    }
  })
})
