import { execFile } from 'node:child_process'
import { mkdtempSync } from 'node:fs'
import { createRequire } from 'node:module'
import { tmpdir } from 'node:os'
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { promisify } from 'node:util'
import { createMCPClient } from '@ai-sdk/mcp'
import { Client } from '@modelcontextprotocol/sdk/client/index.js'
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js'
import type { FastifyInstance } from 'fastify'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { buildApp } from '../../plugins/app.js'
import { loadConfig } from '../../src/services/config.js'
import { API_KEYS, KEYS } from '../http/helpers.js'
import { SLOW } from '../slow.js'
import { directEverything, EVERYTHING_SERVER, upstreamsFile } from '../upstreams/helpers.js'

/*
 * Clients nobody here wrote, as their users run them, against a gateway that fronts
 * server-everything: the Vercel AI SDK's MCP client, mcp-remote (the stdio bridge a desktop host
 * such as Claude Desktop launches) and the MCP Inspector's CLI. What each gets through the
 * gateway is compared with what the server answers when asked directly.
 */

const run = promisify(execFile)
const root = fileURLToPath(new URL('../../', import.meta.url))
const require = createRequire(import.meta.url)
const MCP_REMOTE = join(dirname(require.resolve('mcp-remote/package.json')), 'dist', 'proxy.js')
const INSPECTOR = join(dirname(require.resolve('@modelcontextprotocol/inspector-cli/package.json')), 'build', 'index.js')
const DOC = 'demo://resource/static/document/architecture.md'

let app: FastifyInstance
let url: URL
let direct: Client

beforeAll(async () => {
  const file = upstreamsFile({ mcpServers: { everything: EVERYTHING_SERVER } })
  app = await buildApp({ config: loadConfig({}, { apiKeys: API_KEYS, upstreamsFile: file }), tools: [] })
  url = new URL(`${await app.listen({ host: '127.0.0.1', port: 0 })}/mcp`)
  direct = await directEverything()
}, SLOW.PROCESS_MS)
afterAll(async () => {
  await direct?.close()
  await app?.close()
})

describe('real MCP clients against the gateway', { timeout: SLOW.PROCESS_MS }, () => {
  it('the Vercel AI SDK: an image tool answers its image block, resources and prompts as the server sent them', async () => {
    const client = await createMCPClient({ transport: { type: 'http', url: url.href, headers: { 'x-api-key': KEYS.caller } } })
    try {
      const tools = await client.tools()
      const image = tools.everything_get_tiny_image!
      const result = await image.execute!({}, { toolCallId: 'call-1', messages: [] }) as { content: unknown[] }
      const theirs = await direct.callTool({ name: 'get-tiny-image', arguments: {} })
      expect(result.content).toEqual(theirs.content)
      expect(result.content).toContainEqual(expect.objectContaining({ type: 'image', mimeType: 'image/png' }))
      expect((await client.readResource({ uri: DOC })).contents).toEqual((await direct.readResource({ uri: DOC })).contents)
      expect((await client.experimental_getPrompt({ name: 'everything_args_prompt', arguments: { city: 'Oslo' } })).messages)
        .toEqual((await direct.getPrompt({ name: 'args-prompt', arguments: { city: 'Oslo' } })).messages)
    } finally {
      await client.close()
    }
  })

  it('mcp-remote, as a desktop host launches it: the image, a resource, and progress of a long call', async () => {
    const host = new Client({ name: 'desktop-host', version: '1.0.0' })
    const transport = new StdioClientTransport({
      command: process.execPath,
      args: [MCP_REMOTE, url.href, '--header', `x-api-key:${KEYS.caller}`, '--transport', 'http-only'],
      // Its OAuth state would go to ~/.mcp-auth: kept out of the user's home.
      env: { PATH: process.env.PATH ?? '', HOME: mkdtempSync(join(tmpdir(), 'mcp-remote-')), MCP_REMOTE_CONFIG_DIR: mkdtempSync(join(tmpdir(), 'mcp-remote-auth-')) },
      stderr: 'ignore',
    })
    await host.connect(transport)
    try {
      const image = await host.callTool({ name: 'everything_get_tiny_image', arguments: {} })
      expect(image.content).toEqual((await direct.callTool({ name: 'get-tiny-image', arguments: {} })).content)
      expect((await host.readResource({ uri: DOC })).contents).toEqual((await direct.readResource({ uri: DOC })).contents)
      const heard: number[] = []
      const long = await host.callTool({ name: 'everything_trigger_long_running_operation', arguments: { duration: 0.6, steps: 3 } }, undefined, { onprogress: ({ progress }) => { heard.push(progress) } })
      expect(long.isError).toBe(false)
      expect(heard.length).toBeGreaterThan(0)
      expect(heard).toEqual([...heard].sort((a, b) => a - b))
    } finally {
      await host.close()
    }
  })

  it('the MCP Inspector CLI: lists and reads resources, gets a prompt', async () => {
    const inspect = async (args: string[]): Promise<any> => {
      // Run from a folder whose parent has a package.json (see inspector-cli.test.ts).
      const { stdout } = await run(process.execPath, [INSPECTOR, url.href, '--transport', 'http', '--header', `x-api-key: ${KEYS.caller}`, ...args], { cwd: join(root, 'test'), timeout: 30_000 })
      return JSON.parse(stdout)
    }
    const listed = await inspect(['--method', 'resources/list'])
    expect(listed.resources.map((resource: { uri: string }) => resource.uri)).toContain(DOC)
    expect((await inspect(['--method', 'resources/read', '--uri', DOC])).contents).toEqual((await direct.readResource({ uri: DOC })).contents)
    const prompt = await inspect(['--method', 'prompts/get', '--prompt-name', 'everything_args_prompt', '--prompt-args', 'city=Lima'])
    expect(prompt.messages).toEqual((await direct.getPrompt({ name: 'args-prompt', arguments: { city: 'Lima' } })).messages)
  })
})
