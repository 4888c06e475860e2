/**
 * The floor of the MCP face: one Fastify app serving the bench's `echo` both ways as plainly as
 * each allows, with the same zod schemas checked the same way (by hand, so the two differ in
 * the protocol only): `POST /tools/echo` answers the output as JSON; `POST /mcp` answers the
 * bench's `tools/call` (one tool, stateless, a JSON response) after the transport's checks
 * (Origin, Accept, MCP-Protocol-Version) and the JSON-RPC envelope, with the result as MCP has
 * it (text content and structuredContent). The ratio of the two is what MCP itself costs,
 * whoever serves it: the part of toolgate's `tools/call` to REST ratio no gateway can take away.
 *
 * With BENCH_TRACE (`always_on`, or a ratio such as `0.1`), the REST route is traced by hand
 * (`spans-by-hand.ts`), exporting to a receiver in another process: against the same app
 * untraced, what tracing those two spans costs whoever makes them.
 */
import Fastify, { type FastifyReply } from 'fastify'
import type { AddressInfo } from 'node:net'
import { announce } from './announce.js'
import { startOtlpSink } from '../lib/otlp-sink.js'
import { echo, ECHO_PATH, EchoInput, EchoOutput } from './echo.js'
import { HandTracer, nowMs, type HandSpan } from './spans-by-hand.js'

interface RpcRequest {
  readonly jsonrpc?: unknown
  readonly id?: unknown
  readonly method?: unknown
  readonly params?: { readonly name?: unknown, readonly arguments?: unknown }
}

const VERSIONS = new Set(['2025-11-25', '2025-06-18', '2025-03-26'])
const JSON_TYPE = 'application/json; charset=utf-8'

const app = Fastify({ logger: false })

const trace = process.env.BENCH_TRACE
const tracer = trace === undefined || trace === '' ? undefined : new HandTracer(await startOtlpSink(), trace === 'always_on' ? 1 : Number(trace))
/** A request's server span, as toolgate keeps its own: a field every request has (no map to look up). */
interface Traced { handSpan: HandSpan | undefined }
let calls = 0
if (tracer !== undefined) {
  app.decorateRequest('handSpan', undefined)
  app.addHook('onRequest', (request, reply, done) => {
    const span = tracer.open(request.headers.traceparent)
    if (span !== undefined) {
      (request as unknown as Traced).handSpan = span
      const response = reply.raw
      response.on('close', () => { tracer.endServer(span, request.method, ECHO_PATH, response.statusCode) })
    }
    done()
  })
}

app.post(ECHO_PATH, async (request, reply) => {
  void reply.type(JSON_TYPE)
  const span = (request as unknown as Traced).handSpan
  const start = nowMs()
  const input = EchoInput.safeParse(request.body)
  if (!input.success) return await reply.code(400).send(JSON.stringify({ title: 'invalid input', detail: input.error.message }))
  const output = JSON.stringify(EchoOutput.parse(echo(input.data)))
  if (span !== undefined) tracer!.endCall(span, start, `call-${++calls}`, nowMs() - start)
  return output
})

app.post('/mcp', async (request, reply) => {
  const call = request.body as RpcRequest
  const id = typeof call?.id === 'string' || typeof call?.id === 'number' ? call.id : null
  const answer = (body: Record<string, unknown>): string => JSON.stringify({ jsonrpc: '2.0', id, ...body })
  const refuse = async (status: number, message: string): Promise<FastifyReply> => await reply.code(status).send(answer({ error: { code: -32600, message } }))
  void reply.type(JSON_TYPE)
  const { origin, accept } = request.headers
  const version = request.headers['mcp-protocol-version']
  if (origin !== undefined && origin !== `http://${request.headers.host ?? ''}`) return await refuse(403, 'origin not allowed')
  if (accept !== undefined && !accept.includes('application/json') && !accept.includes('*/*')) return await refuse(406, 'not acceptable')
  if (typeof version === 'string' && !VERSIONS.has(version)) return await refuse(400, 'unsupported protocol version')
  if (call?.jsonrpc !== '2.0' || id === null || call.method !== 'tools/call') return await refuse(400, 'invalid request')
  if (call.params?.name !== 'echo') return answer({ error: { code: -32602, message: 'unknown tool' } })
  const input = EchoInput.safeParse(call.params.arguments ?? {})
  if (!input.success) return answer({ result: { content: [{ type: 'text', text: input.error.message }], isError: true } })
  // The output's JSON once, then as a string for the text content: the least MCP's result takes.
  const json = JSON.stringify(EchoOutput.parse(echo(input.data)))
  return `{"jsonrpc":"2.0","id":${JSON.stringify(id)},"result":{"content":[{"type":"text","text":${JSON.stringify(json)}}],"structuredContent":${json}}}`
})

await app.listen({ host: '127.0.0.1', port: 0 })
announce((app.server.address() as AddressInfo).port)
