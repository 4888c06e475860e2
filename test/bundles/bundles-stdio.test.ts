import { execFile } from 'node:child_process'
import { fileURLToPath } from 'node:url'
import { promisify } from 'node:util'
import { Client } from '@modelcontextprotocol/sdk/client/index.js'
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js'
import { afterEach, describe, expect, it } from 'vitest'
import { SLOW } from '../slow.js'
import { upstreamsFile } from '../upstreams/helpers.js'

/*
 * `toolgate mcp --bundle NAME`, built and launched as a desktop host launches it (run
 * `npm run build` first; `npm test` does): the bundle's tools under its names, nothing else.
 */
const root = fileURLToPath(new URL('../../', import.meta.url))
const run = promisify(execFile)
const clients: Client[] = []
afterEach(async () => { await Promise.all(clients.splice(0).map(async client => { await client.close() })) })

const FILE = upstreamsFile({
  bundles: {
    files: { description: 'Files, carefully.', tools: ['echo', 'delete_*'], aliases: { delete_file: { name: 'remove', description: 'Remove a file for good.' } } },
    closed: { description: 'Not for stdio.', tools: ['echo'], scopes: ['admin'] },
  },
})

function args (bundle: string): string[] {
  return ['dist/bin/toolgate.js', 'mcp', '--upstreams', FILE, '--bundle', bundle, 'test/fixtures/mcp-stdio-tools']
}

describe('toolgate mcp --bundle', { timeout: SLOW.PROCESS_MS }, () => {
  it('serves the bundle\'s tools under its names; a tool outside it is unknown', async () => {
    const client = new Client({ name: 'bundle-stdio-test', version: '1.0.0' })
    await client.connect(new StdioClientTransport({ command: process.execPath, args: args('files'), cwd: root, stderr: 'pipe', env: { PATH: process.env.PATH ?? '', LOG_LEVEL: 'warn' } }))
    clients.push(client)
    const { tools } = await client.listTools()
    expect(tools.map(tool => [tool.name, tool.description])).toEqual([['echo', expect.any(String)], ['remove', 'Remove a file for good.']])
    expect((await client.callTool({ name: 'echo', arguments: { text: 'hey' } })).structuredContent).toEqual({ text: 'hey', length: 3 })
    expect(await client.callTool({ name: 'remove', arguments: { path: '/x' } })).toMatchObject({ isError: true, _meta: { 'dev.toolgate/problem': { code: 'FILE_LOCKED' } } })
    await expect(client.callTool({ name: 'count', arguments: {} })).rejects.toThrow(/unknown tool: count/)
  })

  it('refuses, with exit 2 and a clear message, a bundle that is not declared or not open to it', async () => {
    for (const [bundle, message] of [['nope', /no bundle "nope" in upstreams file .* \(it declares files, closed\)/], ['closed', /bundle "closed" is not open to the stdio principal/]] as const) {
      const failed = await run(process.execPath, args(bundle), { cwd: root, env: { PATH: process.env.PATH ?? '' } }).then(() => undefined, (error: { code: number, stderr: string }) => error)
      expect(failed?.code).toBe(2)
      expect(failed?.stderr).toMatch(message)
    }
  })
})
