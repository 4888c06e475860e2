/**
 * The floor for any HTTP front to a stdio MCP server: node:http, one child, JSON-RPC lines
 * written and read by hand, no validation, no pipeline, no bounds. `POST /` with a JSON body
 * calls the child's `echo` with it and answers the result's content. Run by
 * bench/upstream-mcp.ts: what this costs per call, beside the direct SDK client, is what a
 * hop over loopback HTTP costs on this machine before a gateway does anything at all.
 *
 *   node --import ./runtime/register.mjs bench/targets/upstream-bare.ts SERVER_SCRIPT
 */
import { spawn } from 'node:child_process'
import { createServer } from 'node:http'
import type { AddressInfo } from 'node:net'

interface Answer { readonly id: number, readonly result?: { readonly content?: unknown } }

const script = process.argv[2]
if (script === undefined) throw new Error('usage: upstream-bare.ts SERVER_SCRIPT')
const child = spawn(process.execPath, [script, 'stdio'], { stdio: ['pipe', 'pipe', 'ignore'] })
const waiting = new Map<number, (answer: Answer) => void>()
let nextId = 1
let partial = ''
child.stdout.setEncoding('utf8')
child.stdout.on('data', (chunk: string) => {
  partial += chunk
  for (let end = partial.indexOf('\n'); end !== -1; end = partial.indexOf('\n')) {
    const answer = JSON.parse(partial.slice(0, end)) as Answer
    partial = partial.slice(end + 1)
    waiting.get(answer.id)?.(answer)
    waiting.delete(answer.id)
  }
})

async function send (method: string, params: unknown): Promise<Answer> {
  const id = nextId++
  return await new Promise(resolve => {
    waiting.set(id, resolve)
    child.stdin.write(`${JSON.stringify({ jsonrpc: '2.0', id, method, params })}\n`)
  })
}

await send('initialize', { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'bare', version: '1.0.0' } })
child.stdin.write(`${JSON.stringify({ jsonrpc: '2.0', method: 'notifications/initialized' })}\n`)

const server = createServer((req, res) => {
  let body = ''
  req.setEncoding('utf8')
  req.on('data', (chunk: string) => { body += chunk })
  req.on('end', () => {
    void send('tools/call', { name: 'echo', arguments: JSON.parse(body) }).then(answer => {
      const out = JSON.stringify(answer.result?.content)
      res.writeHead(200, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(out) })
      res.end(out)
    })
  })
})
// Fastify's keep-alive timeout, so that idle connections live as long as the gateway's do.
server.keepAliveTimeout = 72_000
server.listen(0, '127.0.0.1', () => { process.stdout.write(`${(server.address() as AddressInfo).port}\n`) })
// Stopped by SIGTERM, or by the bench's end however it ends: its stdin closes with the bench.
const stop = (): void => {
  child.kill()
  process.exit(0)
}
process.once('SIGTERM', stop)
process.stdin.once('end', stop).resume()
