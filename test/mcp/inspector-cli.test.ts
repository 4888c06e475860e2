import { execFile } from 'node:child_process'
import { createRequire } from 'node:module'
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { promisify } from 'node:util'
import { describe, expect, it } from 'vitest'
import { SLOW } from '../slow.js'
import { KEYS } from '../http/helpers.js'
import { listeningGateway } from './helpers.js'

/*
 * The MCP Inspector's CLI, another independent client (it has its own SDK copy and its own
 * flags), driving a real listening gateway over Streamable HTTP and the built command over stdio.
 */
const run = promisify(execFile)
const root = fileURLToPath(new URL('../../', import.meta.url))
const inspector = join(dirname(createRequire(import.meta.url).resolve('@modelcontextprotocol/inspector-cli/package.json')), 'build', 'index.js')

async function inspect (args: string[]): Promise<any> {
  // inspector-cli 1.0.3 checks `../package.json` against the working folder but imports it
  // relative to its own build folder: run it from a folder whose parent has a package.json.
  const { stdout } = await run(process.execPath, [inspector, ...args], { cwd: join(root, 'test'), timeout: 30_000 })
  return JSON.parse(stdout)
}

describe('the MCP Inspector CLI against toolgate', { timeout: SLOW.PROCESS_MS }, () => {
  it('lists and calls tools over Streamable HTTP with an API key', async () => {
    const { url } = await listeningGateway()
    const auth = ['--header', `x-api-key: ${KEYS.caller}`]
    const listed = await inspect([url.href, '--transport', 'http', ...auth, '--method', 'tools/list'])
    expect(listed.tools.map((tool: { name: string }) => tool.name)).toContain('echo')
    const called = await inspect([url.href, '--transport', 'http', ...auth, '--method', 'tools/call', '--tool-name', 'echo', '--tool-arg', 'text=inspected'])
    expect(called.structuredContent).toEqual({ text: 'inspected', length: 9 })
    const failed = await inspect([url.href, '--transport', 'http', ...auth, '--method', 'tools/call', '--tool-name', 'refuse'])
    expect(failed).toMatchObject({ isError: true, _meta: { 'dev.toolgate/problem': { status: 409 } } })
  })

  it('lists and calls tools of `toolgate mcp` over stdio', async () => {
    const target = [process.execPath, join(root, 'dist/bin/toolgate.js'), 'mcp', join(root, 'test/fixtures/mcp-stdio-tools')]
    const listed = await inspect([...target, '--method', 'tools/list'])
    expect(listed.tools.map((tool: { name: string }) => tool.name)).toEqual(['echo', 'delete_file', 'hang', 'wait_for_abort', 'count'])
    const called = await inspect([...target, '--method', 'tools/call', '--tool-name', 'echo', '--tool-arg', 'text=stdio'])
    expect(called.structuredContent).toEqual({ text: 'stdio', length: 5 })
  })
})
