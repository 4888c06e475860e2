import { spawn, spawnSync, type ChildProcess } from 'node:child_process'
import { mkdtempSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { createServer } from 'node:http'
import type { AddressInfo } from 'node:net'
import { createInterface } from 'node:readline'
import { Client } from '@modelcontextprotocol/sdk/client/index.js'
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js'
import { fileURLToPath } from 'node:url'
import { afterEach, describe, expect, it } from 'vitest'
import { freePort } from '../../scripts/lib/free-port.js'
import { SLOW } from '../slow.js'
import { EVERYTHING, MEMORY, eventually, isRunning, petstore } from '../upstreams/helpers.js'

// `toolgate serve --upstreams` and `toolgate list --upstreams` as they ship (the compiled
// command), in a folder with no tools folder at all: the upstream tools alone.
const bin = join(fileURLToPath(new URL('../..', import.meta.url)), 'dist/bin/toolgate.js')
const started: ChildProcess[] = []
afterEach(() => { for (const child of started.splice(0)) if (child.exitCode === null) child.kill('SIGKILL') })

function project (): string {
  const dir = mkdtempSync(join(tmpdir(), 'toolgate-upstreams-cli-'))
  writeFileSync(join(dir, 'mcp.json'), JSON.stringify({
    mcpServers: {
      everything: { command: process.execPath, args: [EVERYTHING, 'stdio'] },
      memory: { command: process.execPath, args: [MEMORY], env: { MEMORY_FILE_PATH: join(dir, 'memory.jsonl') } },
    },
    tools: { memory_delete_entities: { effects: ['irreversible'], requiresApproval: true } },
  }))
  return dir
}

async function serve (dir: string): Promise<{ child: ChildProcess, address: string, children: () => number[] }> {
  const port = await freePort()
  const child = spawn(process.execPath, [bin, 'serve', '--upstreams', 'mcp.json'], { cwd: dir, env: { PATH: process.env.PATH, HOME: process.env.HOME, PORT: String(port) }, stdio: ['ignore', 'pipe', 'pipe'] })
  started.push(child)
  const logs: Array<Record<string, unknown>> = []
  createInterface({ input: child.stdout! }).on('line', line => { try { logs.push(JSON.parse(line) as Record<string, unknown>) } catch { /* not a log line */ } })
  await eventually(() => logs.some(line => line.msg === 'toolgate listening'), 'the gateway listens', SLOW.PROCESS_MS / 2)
  return { child, address: `http://127.0.0.1:${port}`, children: () => logs.filter(line => line.msg === 'upstream connected').map(line => line.childPid as number) }
}

describe('toolgate serve --upstreams', { timeout: SLOW.PROCESS_MS }, () => {
  it('serves the upstream tools alone with no tools folder, and SIGTERM stops every child', async () => {
    const dir = project()
    const gateway = await serve(dir)
    const tools = await (await fetch(`${gateway.address}/tools`)).json() as { tools: Array<{ id: string }> }
    expect(tools.tools.map(tool => tool.id)).toEqual(expect.arrayContaining(['everything_echo', 'memory_read_graph']))
    expect(tools.tools.map(tool => tool.id)).not.toContain('notes_read')
    const echo = await fetch(`${gateway.address}/tools/everything_echo`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ message: 'cli' }) })
    expect(await echo.json()).toEqual({ content: [{ type: 'text', text: 'Echo: cli' }] })
    const pids = gateway.children()
    expect(pids).toHaveLength(2)
    gateway.child.kill('SIGTERM')
    await new Promise(resolve => gateway.child.once('exit', resolve))
    expect(pids.filter(isRunning)).toEqual([])
  })

  it('a gateway killed outright leaves no child behind: their stdin closes and they exit', async () => {
    const gateway = await serve(project())
    const pids = gateway.children()
    expect(pids.every(isRunning)).toBe(true)
    gateway.child.kill('SIGKILL')
    await eventually(() => !pids.some(isRunning), 'every child exited', 10_000)
  })

  it('toolgate list --upstreams shows each upstream tool, its server and name, and what the operator did not declare', () => {
    const dir = project()
    const listed = spawnSync(process.execPath, [bin, 'list', '--upstreams', 'mcp.json'], { cwd: dir, encoding: 'utf8', timeout: SLOW.PROCESS_MS / 2 })
    expect(listed.status, listed.stderr).toBe(0)
    const line = (id: string) => listed.stdout.split('\n').find(row => row.startsWith(id + ' '))!
    expect(line('memory_delete_entities')).toMatch(/irreversible .* memory\/delete_entities +isReadOnly=upstream isConcurrencySafe=upstream$/)
    expect(line('everything_echo')).toMatch(/everything\/echo +effects=upstream isReadOnly=upstream isConcurrencySafe=upstream$/)
  })

  it('toolgate list --upstreams shows an OpenAPI service\'s operations with their method defaults, no network needed', () => {
    const dir = mkdtempSync(join(tmpdir(), 'toolgate-upstreams-cli-'))
    writeFileSync(join(dir, 'up.json'), JSON.stringify({
      openapi: { pets: { document: petstore('3.0'), baseUrl: 'http://127.0.0.1:9', include: ['getPetById', 'deletePet'] } },
      tools: { pets_delete_pet: { requiresApproval: true } },
    }))
    const listed = spawnSync(process.execPath, [bin, 'list', '--upstreams', 'up.json'], { cwd: dir, encoding: 'utf8', timeout: SLOW.PROCESS_MS / 2 })
    expect(listed.status, listed.stderr).toBe(0)
    const line = (id: string) => listed.stdout.split('\n').find(row => row.startsWith(id + ' '))!
    expect(line('pets_get_pet_by_id')).toMatch(/read-only,concurrency-safe .*pets\/getPetById/)
    expect(line('pets_delete_pet')).toMatch(/external,irreversible .*pets\/deletePet .*isReadOnly=default/)
  })

  it('toolgate mcp --upstreams serves an HTTP service\'s operations to the MCP SDK client over stdio', async () => {
    const service = createServer((request, response) => {
      response.writeHead(200, { 'content-type': 'application/json' })
      response.end(JSON.stringify({ id: request.url!.split('/').pop(), name: 'seen' }))
    })
    await new Promise<void>(resolve => service.listen(0, '127.0.0.1', resolve))
    try {
      const dir = mkdtempSync(join(tmpdir(), 'toolgate-upstreams-cli-'))
      writeFileSync(join(dir, 'items.json'), JSON.stringify({
        openapi: '3.1.0',
        info: { title: 'items', version: '1' },
        paths: { '/items/{id}': { get: { operationId: 'getItem', parameters: [{ name: 'id', in: 'path', required: true, schema: { type: 'string' } }], responses: { 200: { description: 'ok', content: { 'application/json': { schema: { type: 'object', properties: { id: { type: 'string' }, name: { type: 'string' } } } } } } } } } },
      }))
      writeFileSync(join(dir, 'up.json'), JSON.stringify({ openapi: { items: { document: './items.json', baseUrl: `http://127.0.0.1:${(service.address() as AddressInfo).port}` } } }))
      const client = new Client({ name: 'test', version: '1.0.0' })
      await client.connect(new StdioClientTransport({ command: process.execPath, args: [bin, 'mcp', '--upstreams', 'up.json'], cwd: dir, stderr: 'ignore', env: { PATH: process.env.PATH ?? '', LOG_LEVEL: 'warn' } }))
      try {
        expect((await client.listTools()).tools.map(tool => tool.name)).toContain('items_get_item')
        const result = await client.callTool({ name: 'items_get_item', arguments: { id: 'a/b' } })
        expect(result.structuredContent).toEqual({ id: 'a%2Fb', name: 'seen' })
      } finally {
        await client.close()
      }
    } finally {
      await new Promise(resolve => service.close(resolve))
    }
  })

  it('a bad upstreams file stops start-up with the server and key named, and exit code 1', () => {
    const dir = mkdtempSync(join(tmpdir(), 'toolgate-upstreams-bad-'))
    writeFileSync(join(dir, 'mcp.json'), JSON.stringify({ mcpServers: { gh: { command: 'x', env: { GITHUB_TOKEN: '${NOT_SET_ANYWHERE}' } } } }))
    const run = spawnSync(process.execPath, [bin, 'serve', '--upstreams', 'mcp.json'], { cwd: dir, encoding: 'utf8', timeout: SLOW.PROCESS_MS / 2 })
    expect(run.status).toBe(1)
    expect(run.stderr).toContain('mcpServers.gh.env.GITHUB_TOKEN: ${NOT_SET_ANYWHERE} is not set')
  })
})
