/**
 * The upstream path alone, in this one process: `UpstreamConnection.call` to server-everything's
 * `echo` over stdio against the MCP SDK client's `callTool` on its own child, same concurrency,
 * CPU microseconds per call of this process and of the server child.
 *
 *   npx tsx bench/upstream-call.ts [--seconds 3] [--rounds 3] [--concurrency 8]
 */
import { readFileSync } from 'node:fs'
import { createRequire } from 'node:module'
import { dirname, join } from 'node:path'
import { Client } from '@modelcontextprotocol/sdk/client/index.js'
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js'
import { UpstreamConnection } from '../src/services/upstreams/mcp/connection.js'
import { parseUpstreams } from '../src/services/upstreams/file.js'
import { numberFlag } from './lib/args.js'
import { processCpuSeconds } from './lib/cpu.js'

const seconds = numberFlag('seconds', 3)
const rounds = numberFlag('rounds', 3)
const concurrency = numberFlag('concurrency', 8)

const require = createRequire(import.meta.url)
const everything = join(dirname(require.resolve('@modelcontextprotocol/server-everything/package.json')), 'dist/index.js')

const direct = new Client({ name: 'bench', version: '1.0.0' })
const transport = new StdioClientTransport({ command: process.execPath, args: [everything, 'stdio'], stderr: 'ignore' })
await direct.connect(transport)

const file = parseUpstreams({ mcpServers: { everything: { command: process.execPath, args: [everything, 'stdio'], maxInFlight: 64 } } }, 'bench', process.env)
const quiet = { info () {}, warn () {}, error () {} }
const connection = new UpstreamConnection(file.servers[0]!, { log: quiet, maxMessageBytes: 4 * 1024 * 1024, onTools () {} })
await connection.start()
/** The connection's child: this process's other child. */
const child = (): number | undefined => {
  const children = readFileSync(`/proc/${process.pid}/task/${process.pid}/children`, 'utf8').trim().split(' ').map(Number)
  return children.find(pid => pid !== transport.pid)
}

const signal = new AbortController().signal
const paths = [
  { id: 'sdk client', server: () => transport.pid ?? undefined, call: async () => { await direct.callTool({ name: 'echo', arguments: { message: 'hello' } }) } },
  { id: 'UpstreamConnection', server: child, call: async () => { await connection.call('echo', { message: 'hello' }, { signal, readOnly: false }) } },
]

async function measure (path: typeof paths[number], ms: number): Promise<string> {
  const cpu = process.cpuUsage()
  const pid = path.server()
  const serverBefore = pid === undefined ? undefined : processCpuSeconds(pid)
  let calls = 0
  const started = performance.now()
  const until = started + ms
  await Promise.all(Array.from({ length: concurrency }, async () => {
    while (performance.now() < until) {
      await path.call()
      calls++
    }
  }))
  const elapsed = performance.now() - started
  const used = process.cpuUsage(cpu)
  const server = pid === undefined || serverBefore === undefined ? '' : ` server ${Math.round((processCpuSeconds(pid)! - serverBefore) * 1e6 / calls)}`
  return `${path.id.padEnd(20)} ${Math.round(calls / elapsed * 1000).toString().padStart(6)} calls/s  this process ${Math.round((used.user + used.system) / calls)} us/call${server}`
}

for (const path of paths) await measure(path, 1000)
for (let round = 0; round < rounds; round++) {
  for (const path of paths) process.stdout.write(`${await measure(path, seconds * 1000)}\n`)
}
await direct.close()
await connection.close()
