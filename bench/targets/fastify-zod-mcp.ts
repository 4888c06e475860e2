/**
 * The floor of the MCP face: the baseline's Fastify + fastify-type-provider-zod app answering the
 * bench's `tools/call` as plainly as the protocol allows (one tool, stateless, a JSON response):
 * the transport's checks (Origin, Accept, MCP-Protocol-Version), the JSON-RPC envelope, the
 * arguments and the result validated by the same zod schemas, the result as MCP has it (text
 * content and structuredContent). Against `fastify-zod` (the same
 * stack over REST) it measures what the protocol itself costs, whoever serves it: the part of
 * toolgate's `tools/call` to REST ratio no gateway can take away.
 */
import Fastify from 'fastify'
import type { AddressInfo } from 'node:net'
import { announce } from './announce.js'
import { echo, EchoInput, EchoOutput } from './echo.js'

interface RpcRequest {
  readonly jsonrpc?: unknown
  readonly id?: unknown
  readonly method?: unknown
  readonly params?: { readonly name?: unknown, readonly arguments?: unknown }
}

const app = Fastify({ logger: false })
const VERSIONS = new Set(['2025-11-25', '2025-06-18', '2025-03-26'])

app.post('/mcp', async (request, reply) => {
  const call = request.body as RpcRequest
  const id = typeof call?.id === 'string' || typeof call?.id === 'number' ? call.id : null
  const answer = (body: Record<string, unknown>): string => JSON.stringify({ jsonrpc: '2.0', id, ...body })
  void reply.type('application/json; charset=utf-8')
  const { origin, accept } = request.headers
  const version = request.headers['mcp-protocol-version']
  if (origin !== undefined && origin !== `http://${request.headers.host ?? ''}`) return await reply.code(403).send(answer({ error: { code: -32600, message: 'origin not allowed' } }))
  if (accept !== undefined && !accept.includes('application/json') && !accept.includes('*/*')) return await reply.code(406).send(answer({ error: { code: -32600, message: 'not acceptable' } }))
  if (typeof version === 'string' && !VERSIONS.has(version)) return await reply.code(400).send(answer({ error: { code: -32600, message: 'unsupported protocol version' } }))
  if (call?.jsonrpc !== '2.0' || id === null || call.method !== 'tools/call') {
    return await reply.code(400).send(answer({ error: { code: -32600, message: 'invalid request' } }))
  }
  if (call.params?.name !== 'echo') return answer({ error: { code: -32602, message: 'unknown tool' } })
  const input = EchoInput.safeParse(call.params.arguments ?? {})
  if (!input.success) return answer({ result: { content: [{ type: 'text', text: input.error.message }], isError: true } })
  const output = EchoOutput.parse(echo(input.data))
  return answer({ result: { content: [{ type: 'text', text: JSON.stringify(output) }], structuredContent: output } })
})

await app.listen({ host: '127.0.0.1', port: 0 })
announce((app.server.address() as AddressInfo).port)
