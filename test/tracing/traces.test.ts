import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { trace } from '@opentelemetry/api'
import { z } from 'zod'
import type { FastifyInstance, FastifyRequest } from 'fastify'
import { callTracer } from '../../plugins/observability/tracing.js'
import { buildApp } from '../../plugins/app.js'
import { defineTool, type TraceContext } from '../../src/index.js'
import { loadConfig } from '../../src/services/config.js'
import { tracingFromEnv } from '../../src/services/tracing/setup.js'
import type { Tracing } from '../../src/services/tracing/types.js'
import { httpTools } from '../fixtures/http-tools.js'
import { API_KEYS, auth, KEYS } from '../http/helpers.js'
import { OtlpReceiver, type ReceivedSpan } from './otlp-receiver.js'
import { createServer, request, type IncomingHttpHeaders, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import { createUrlFetchTool } from '../../tools/url-fetch.js'

const CALLER_TRACE = '0af7651916cd43dd8448eb211c80319c'
const CALLER_SPAN = 'b7ad6b7169203331'
const traceparent = `00-${CALLER_TRACE}-${CALLER_SPAN}-01`

/** What a tool saw as `ctx.trace`, by call. */
const seen: Array<TraceContext | undefined> = []
const traceAware = defineTool({
  id: 'trace_aware', kind: 'write', description: 'Reports the trace context it was given.', isReadOnly: false, isConcurrencySafe: false,
  authorize () {}, inputSchema: z.object({}), outputSchema: z.object({ traceparent: z.string().nullable() }),
  execute: (_input, ctx) => {
    seen.push(ctx.trace)
    activeInTool.push(trace.getActiveSpan()?.spanContext().spanId)
    return { traceparent: ctx.trace?.traceparent ?? null }
  },
})
/** The span id OpenTelemetry's active span had inside the tool, by call. */
const activeInTool: Array<string | undefined> = []

let receiver: OtlpReceiver
let tracing: Tracing
let app: FastifyInstance
/** A service the url_fetch tool calls: what headers reached it. */
let upstream: Server
const upstreamSaw: IncomingHttpHeaders[] = []

beforeAll(async () => {
  upstream = createServer((request, response) => { upstreamSaw.push(request.headers); response.end('ok') })
  await new Promise<void>(resolve => upstream.listen(0, '127.0.0.1', resolve))
  const urlFetch = createUrlFetchTool({ allowedHosts: ['127.0.0.1'], allowLoopback: true })
  receiver = await OtlpReceiver.start()
  tracing = (await tracingFromEnv({ OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url, OTEL_EXPORTER_OTLP_PROTOCOL: 'http/json', OTEL_SERVICE_NAME: 'toolgate-under-test', OTEL_TRACES_SAMPLER: 'always_on' }))!
  app = await buildApp({ config: loadConfig({}, { apiKeys: API_KEYS }), tools: [...httpTools, traceAware, urlFetch], tracing })
})

afterAll(async () => {
  await app.close()
  await receiver.close()
  await new Promise(resolve => upstream.close(resolve))
})

async function call (tool: string, body: unknown, headers: Record<string, string> = {}): Promise<{ status: number, span: ReceivedSpan, http: ReceivedSpan, body: unknown }> {
  const before = new Set(receiver.spans)
  const response = await app.inject({ method: 'POST', url: `/tools/${tool}`, headers: { ...auth(KEYS.admin), ...headers }, payload: body as object })
  await tracing.forceFlush()
  const fresh = receiver.spans.filter(span => !before.has(span))
  const span = fresh.find(s => s.name === `execute_tool ${tool}`)
  const http = fresh.find(s => s.name === `POST /tools/${tool}`)
  expect(span, `execute_tool ${tool} span`).toBeDefined()
  expect(http, `POST /tools/${tool} span`).toBeDefined()
  return { status: response.statusCode, span: span!, http: http!, body: response.json() }
}

const UNSET = 0
const ERROR = 2
const INTERNAL = 1
const SERVER = 2

describe('tool call spans', () => {
  it('a successful call: execute_tool span under the HTTP server span, under the caller\'s traceparent', async () => {
    const { status, span, http } = await call('echo', { text: 'hi' }, { traceparent })
    expect(status).toBe(200)
    expect(http).toMatchObject({ traceId: CALLER_TRACE, parentSpanId: CALLER_SPAN, kind: SERVER, service: 'toolgate-under-test' })
    expect(span).toMatchObject({ traceId: CALLER_TRACE, parentSpanId: http.spanId, kind: INTERNAL, status: { code: UNSET } })
    expect(span.attributes).toMatchObject({
      'gen_ai.operation.name': 'execute_tool', 'gen_ai.tool.name': 'echo', 'toolgate.tool.kind': 'read',
      'toolgate.tool.effects': [], 'toolgate.tool.read_only': true, 'toolgate.outcome': 'ok', 'toolgate.status': 200,
      'toolgate.idempotent_replay': false, 'toolgate.executed': true,
    })
    // The server span after the HTTP conventions, named for the tool's own operation.
    expect(http.attributes).toMatchObject({ 'http.request.method': 'POST', 'url.path': '/tools/echo', 'url.scheme': 'http', 'http.route': '/tools/echo', 'http.response.status_code': 200 })
    expect(http.status.code).toBe(UNSET)
    expect(span.attributes['gen_ai.tool.call.id']).toMatch(/\S+/)
    expect(span.attributes['toolgate.queue_wait_ms']).toBe(0)
    expect(span.attributes).not.toHaveProperty('error.type')
  })

  it('without a traceparent the call starts its own trace', async () => {
    const { span, http } = await call('echo', { text: 'hi' })
    expect(http.parentSpanId).toBeUndefined()
    expect(span.traceId).toBe(http.traceId)
    expect(span.traceId).not.toBe(CALLER_TRACE)
  })

  it('a tool error: status ERROR, error.type the tool\'s code', async () => {
    const { status, span } = await call('refuse', {}, { traceparent })
    expect(status).toBe(409)
    expect(span.status).toMatchObject({ code: ERROR, message: 'ALREADY_DONE' })
    expect(span.attributes).toMatchObject({ 'error.type': 'ALREADY_DONE', 'toolgate.outcome': 'tool_error', 'toolgate.status': 409, 'toolgate.tool.effects': [], 'toolgate.tool.read_only': false })
    expect(span.traceId).toBe(CALLER_TRACE)
  })

  it('a timeout: error.type TOOLGATE_TIMEOUT, outcome unknown (a write that had begun)', async () => {
    const { status, span, http } = await call('hang', {}, { traceparent })
    expect(status).toBe(504)
    // A 5xx makes the server span an error too (a 4xx does not: the caller's mistake).
    expect(http).toMatchObject({ status: { code: ERROR }, attributes: expect.objectContaining({ 'http.response.status_code': 504, 'error.type': '504' }) })
    expect(span.status.code).toBe(ERROR)
    expect(span.attributes).toMatchObject({ 'error.type': 'TOOLGATE_TIMEOUT', 'toolgate.outcome': 'unknown', 'toolgate.status': 504, 'toolgate.executed': true })
  })

  it('a denial by authorize: error.type TOOLGATE_DENIED, never executed', async () => {
    const { status, span } = await call('guarded', { deny: true }, { traceparent })
    expect(status).toBe(403)
    expect(span.status.code).toBe(ERROR)
    expect(span.attributes).toMatchObject({ 'error.type': 'TOOLGATE_DENIED', 'toolgate.outcome': 'forbidden', 'toolgate.executed': false })
  })

  it('an idempotent replay is marked as one', async () => {
    // Its own session: the abandoned `hang` call above still holds the admin's slot for a while.
    const headers = { traceparent, 'idempotency-key': 'trace-replay-1', 'x-session-id': 'replay' }
    await call('slow_write', { ms: 0 }, headers)
    const { status, span } = await call('slow_write', { ms: 0 }, headers)
    expect(status).toBe(200)
    expect(span.attributes).toMatchObject({ 'toolgate.idempotent_replay': true, 'toolgate.outcome': 'replayed', 'toolgate.tool.effects': ['irreversible'] })
  })

  it('the tool sees its call\'s span as ctx.trace, to pass on in its own requests', async () => {
    const { span, body } = await call('trace_aware', {}, { traceparent, tracestate: 'vendor=abc' })
    expect(body).toEqual({ traceparent: `00-${CALLER_TRACE}-${span.spanId}-01` })
    expect(seen.at(-1)).toEqual({ traceparent: `00-${CALLER_TRACE}-${span.spanId}-01`, tracestate: 'vendor=abc' })
    // Without TRACE_ACTIVE_SPAN no context manager is installed: ctx.trace is the way in.
    expect(activeInTool.at(-1)).toBeUndefined()
  })

  it('a route no tool matched gets a server span named by its method alone', async () => {
    const before = new Set(receiver.spans)
    const response = await app.inject({ method: 'GET', url: '/no/such/route', headers: { traceparent } })
    expect(response.statusCode).toBe(404)
    await tracing.forceFlush()
    const http = receiver.spans.find(s => !before.has(s) && s.traceId === CALLER_TRACE)
    expect(http).toMatchObject({ name: 'GET', kind: SERVER, parentSpanId: CALLER_SPAN, attributes: expect.objectContaining({ 'http.response.status_code': 404 }) })
    expect(http!.attributes).not.toHaveProperty('http.route')
  })

  it('url_fetch passes the call\'s trace context on to the service it fetches', async () => {
    const { status, span } = await call('url_fetch', { url: `http://127.0.0.1:${(upstream.address() as AddressInfo).port}/` }, { traceparent })
    expect(status).toBe(200)
    expect(upstreamSaw.at(-1)?.traceparent).toBe(`00-${CALLER_TRACE}-${span.spanId}-01`)
  })

  it('health probes and scrapes make no spans', async () => {
    const before = receiver.spans.length
    await app.inject({ method: 'GET', url: '/healthz' })
    await app.inject({ method: 'GET', url: '/metrics' })
    await tracing.forceFlush()
    expect(receiver.spans.length).toBe(before)
  })
})

describe('another transport\'s trace context', () => {
  it('a W3C carrier from the transport (MCP _meta) is the parent instead of the HTTP request', async () => {
    const openSpan = callTracer(tracing)
    const fromMeta = openSpan(httpTools[0]!, {} as FastifyRequest, { traceparent: '00-11111111111111111111111111111111-2222222222222222-01' })
    fromMeta.span.end()
    await tracing.forceFlush() // exported now, so later tests do not take it for theirs
    expect(fromMeta.traceId).toBe('11111111111111111111111111111111')
    expect(fromMeta.headers.traceparent).toMatch(/^00-11111111111111111111111111111111-[0-9a-f]{16}-01$/)
  })
})

describe('metrics while tracing', () => {
  it('an OpenMetrics scrape shows the duration histogram\'s exemplars with trace ids; the text format is unchanged', async () => {
    const { span } = await call('echo', { text: 'exemplar' }, { traceparent })
    const om = await app.inject({ method: 'GET', url: '/metrics', headers: { accept: 'application/openmetrics-text;version=1.0.0,text/plain;version=0.0.4;q=0.5' } })
    expect(om.headers['content-type']).toBe('application/openmetrics-text; version=1.0.0; charset=utf-8')
    const body = om.body
    expect(body.endsWith('\n# EOF\n')).toBe(true)
    expect(body.split('\n').filter(line => line === '# EOF')).toHaveLength(1)
    expect(body).toContain('# TYPE toolgate_tool_calls counter\n')
    expect(body).toMatch(/^toolgate_tool_calls_total\{tool="echo",kind="read",effects="none",outcome="ok"\} \d+$/m)
    const exemplar = new RegExp(`^toolgate_tool_duration_seconds_bucket\\{tool="echo",kind="read",effects="none",outcome="ok",le="[^"]+"\\} \\d+ # \\{trace_id="${CALLER_TRACE}",span_id="${span.spanId}"\\} [0-9.e-]+ \\d+\\.\\d{3}$`, 'm')
    expect(body).toMatch(exemplar)
    expect(body.slice(0, -1).split('\n')).not.toContain('') // OpenMetrics allows no blank lines

    const text = await app.inject({ method: 'GET', url: '/metrics' })
    expect(text.headers['content-type']).toBe('text/plain; version=0.0.4; charset=utf-8')
    expect(text.body).not.toContain(' # {')
    expect(text.body).toContain('# TYPE toolgate_tool_calls_total counter\n')
  })

  it('an OpenMetrics scrape serves every family the text format does (the approvals\' too)', async () => {
    const families = (body: string, openMetrics: boolean): string[] => [...body.matchAll(/^# TYPE (\S+) (\S+)$/gm)]
      .map(([, name, type]) => (openMetrics && type === 'counter' ? `${name!}_total` : name!)).sort()
    const om = await app.inject({ method: 'GET', url: '/metrics', headers: { accept: 'application/openmetrics-text;version=1.0.0' } })
    const text = await app.inject({ method: 'GET', url: '/metrics' })
    expect(families(text.body, false)).toContain('toolgate_approvals_pending')
    expect(families(om.body, true)).toEqual(families(text.body, false))
  })
})

describe('tool calls over MCP', () => {
  const MCP_TRACE = '4bf92f3577b34da6a3ce929d0e0e4736'
  const MCP_PARENT = '00f067aa0ba902b7'
  const mcpCall = (meta: Record<string, unknown>) => app.inject({
    method: 'POST', url: '/mcp',
    headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream', ...auth(KEYS.admin) },
    payload: JSON.stringify({ jsonrpc: '2.0', id: 7, method: 'tools/call', params: { name: 'trace_aware', arguments: {}, _meta: meta } }),
  })

  it('take their parent from _meta traceparent, carry the MCP method, and hand the tool its context', async () => {
    const before = new Set(receiver.spans)
    const response = await mcpCall({ traceparent: `00-${MCP_TRACE}-${MCP_PARENT}-01` })
    expect(response.statusCode).toBe(200)
    await tracing.forceFlush()
    const span = receiver.spans.find(s => !before.has(s) && s.name === 'execute_tool trace_aware')!
    expect(span).toMatchObject({ traceId: MCP_TRACE, parentSpanId: MCP_PARENT, kind: INTERNAL, status: { code: UNSET } })
    expect(span.attributes).toMatchObject({ 'gen_ai.operation.name': 'execute_tool', 'gen_ai.tool.name': 'trace_aware', 'mcp.method.name': 'tools/call', 'toolgate.outcome': 'ok' })
    // The MCP server span, as the MCP conventions name it: method and target.
    const server = receiver.spans.find(s => !before.has(s) && s.name === 'tools/call trace_aware')
    expect(server).toMatchObject({ kind: SERVER, attributes: expect.objectContaining({ 'mcp.method.name': 'tools/call', 'gen_ai.tool.name': 'trace_aware' }) })
    // The tool ran inside that span: its context names the span as the parent of what it calls.
    expect(seen.at(-1)?.traceparent).toBe(`00-${MCP_TRACE}-${span.spanId}-01`)
  })

  it('without _meta trace context, are children of the MCP request\'s server span', async () => {
    const before = new Set(receiver.spans)
    const response = await mcpCall({})
    expect(response.statusCode).toBe(200)
    await tracing.forceFlush()
    const span = receiver.spans.find(s => !before.has(s) && s.name === 'execute_tool trace_aware')!
    const http = receiver.spans.find(s => s.spanId === span.parentSpanId)
    expect(http).toMatchObject({ name: 'tools/call trace_aware', kind: SERVER })
  })
})

describe('logs while tracing', () => {
  it('carry the trace and span ids of the call they are about', async () => {
    const lines: Array<Record<string, unknown>> = []
    const logged = await buildApp({
      config: loadConfig({}, { apiKeys: API_KEYS, logLevel: 'info' }), tools: httpTools, tracing,
      logger: { level: 'info', stream: { write: (line: string) => { lines.push(JSON.parse(line) as Record<string, unknown>) } } },
    })
    try {
      await logged.inject({ method: 'POST', url: '/tools/refuse', headers: { ...auth(KEYS.admin), traceparent }, payload: {} })
      await tracing.forceFlush()
      const span = receiver.named('execute_tool refuse').at(-1)!
      const line = lines.find(l => l.msg === 'tool call' && l.tool === 'refuse')
      expect(line).toMatchObject({ trace_id: CALLER_TRACE, span_id: span.spanId, trace_flags: '01' })
    } finally {
      await logged.close()
    }
  })
})

describe('a client that goes away', () => {
  it('mid-call or mid-body: its server span is ended and exported, marked client_aborted, without a status; a finished request\'s span is not', async () => {
    // Its own tracing: closing an app shuts its tracing down.
    const own = (await tracingFromEnv({ OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url, OTEL_EXPORTER_OTLP_PROTOCOL: 'http/json', OTEL_SERVICE_NAME: 'toolgate-under-test', OTEL_TRACES_SAMPLER: 'always_on' }))!
    const served = await buildApp({ config: loadConfig({}, { apiKeys: API_KEYS }), tools: httpTools, tracing: own })
    await served.listen({ host: '127.0.0.1', port: 0 })
    try {
      const { port } = served.server.address() as AddressInfo
      const before = new Set(receiver.spans)
      const post = (ms: number, abortAfterMs?: number): Promise<number | 'aborted'> => new Promise(resolve => {
        const body = JSON.stringify({ ms })
        const req = request({ host: '127.0.0.1', port, path: '/tools/slow_write', method: 'POST', headers: { ...auth(KEYS.admin), 'content-type': 'application/json', 'content-length': String(Buffer.byteLength(body)) } }, response => {
          response.resume()
          response.on('end', () => { resolve(response.statusCode!) })
        })
        req.on('error', () => { resolve('aborted') })
        req.end(body)
        if (abortAfterMs !== undefined) setTimeout(() => { req.destroy() }, abortAfterMs)
      })
      expect(await post(400, 100)).toBe('aborted')
      expect(await post(1)).toBe(200)
      // A body that never arrives whole: the request is still being read when the client leaves.
      await new Promise<void>(resolve => {
        const req = request({ host: '127.0.0.1', port, path: '/tools/slow_write', method: 'POST', headers: { ...auth(KEYS.admin), 'content-type': 'application/json', 'content-length': '1000' } })
        req.on('error', () => { resolve() })
        req.write('{"ms":')
        setTimeout(() => { req.destroy() }, 100)
      })
      await new Promise(resolve => setTimeout(resolve, 100))
      await own.forceFlush()
      const servers = receiver.spans.filter(s => !before.has(s) && s.name === 'POST /tools/slow_write')
      expect(servers).toHaveLength(2)
      const [aborted, finished] = servers.sort((a, b) => Number(a.attributes['http.response.status_code'] ?? 0) - Number(b.attributes['http.response.status_code'] ?? 0))
      expect(aborted!.attributes).toMatchObject({ 'toolgate.client_aborted': true })
      expect(aborted!.attributes['http.response.status_code']).toBeUndefined()
      expect(finished!.attributes).toMatchObject({ 'http.response.status_code': 200 })
      expect(finished!.attributes['toolgate.client_aborted']).toBeUndefined()
      const midBody = receiver.spans.filter(s => !before.has(s) && s.name === 'POST /tools/:id')
      expect(midBody).toHaveLength(1)
      expect(midBody[0]!.attributes).toMatchObject({ 'toolgate.client_aborted': true, 'url.path': '/tools/slow_write' })
    } finally {
      await served.close()
    }
  })
})
