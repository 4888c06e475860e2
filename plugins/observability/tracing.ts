import { context, createContextKey, propagation, ROOT_CONTEXT, type Context } from '@opentelemetry/api'
import type { FastifyInstance, FastifyRequest } from 'fastify'
import type { AnyTool } from '../../src/index.js'
import { CallSpan, toolSpanFacts, type ToolSpanFacts } from '../../src/services/tracing/call-span.js'
import { setOwnAttributes } from '../../src/services/tracing/own-attributes.js'
import { ServerSpan } from '../../src/services/tracing/server-span.js'
import type { Tracing } from '../../src/services/tracing/types.js'

declare module 'fastify' {
  interface FastifyRequest {
    /** The request's HTTP server span while tracing is on (null: not traced). */
    serverSpan: ServerSpan | null
  }
}

/** Probes and scrapes: a span each would only bury the calls an operator looks for. */
const UNTRACED = new Set(['/healthz', '/readyz', '/metrics'])

/**
 * The HTTP server span of every request (`server-span.ts`), opened by the first `onRequest`
 * hook and ended when the response closes: sent, or cut off by a client that went away (during
 * the call, the usual case, or while its body was still arriving). One hook and one span: no
 * per-hook spans, no context switch for the whole request (an instrumentation that does either
 * costs every request, sampled or not). Registered first, so it sees every route.
 *
 * Only a span that records listens for the close: one the sampler left out holds nothing to end.
 * No `onResponse` hook: with one, Fastify times every response and adds listeners to it, for the
 * nine requests in ten a ratio sampler leaves out too.
 */
export async function registerHttpTracing (app: FastifyInstance, tracing: Tracing): Promise<void> {
  app.decorateRequest('serverSpan', null)
  app.addHook('onRequest', (request, reply, done) => {
    const path = pathOf(request.url)
    if (!UNTRACED.has(path)) {
      const span = new ServerSpan(tracing.tracer, {
        method: request.method, path, headers: request.headers,
        details: () => ({ route: request.routeOptions.url, scheme: request.protocol, httpVersion: request.raw.httpVersion }),
      })
      request.serverSpan = span
      if (span.isRecording) {
        const response = reply.raw
        // `on`, not `once`: a response closes once, and `once` adds a wrapper and a removal.
        // Ended (the gateway sent its answer) is what counts, not whether the client read all of it.
        response.on('close', () => { span.end(response.statusCode, !response.writableEnded) })
      }
    }
    done()
  })
  app.addHook('onClose', async () => { await tracing.shutdown() })
}

function pathOf (url: string): string {
  const query = url.indexOf('?')
  return query === -1 ? url : url.slice(0, query)
}

/**
 * What a route calls to open the span of one call: a child of the request's span, or, when the
 * transport carries its own W3C trace context (MCP's `params._meta.traceparent`), of that.
 */
export type CallTracer = (tool: AnyTool, request: FastifyRequest, carrier?: { readonly traceparent?: unknown, readonly tracestate?: unknown }, mcp?: McpCallFacts) => CallSpan

/** An MCP request's facts, for the MCP semantic conventions. */
export interface McpCallFacts {
  readonly method: string
  readonly protocolVersion?: string
  readonly requestId?: string | number
}

export function callTracer (tracing: Tracing): CallTracer {
  // Per declaration, made at its first call: a replaced tool gets its own, a removed one's goes with it.
  const facts = new WeakMap<AnyTool, ToolSpanFacts>()
  const factsOf = (tool: AnyTool): ToolSpanFacts => {
    let made = facts.get(tool)
    if (made === undefined) {
      made = toolSpanFacts(tool)
      facts.set(tool, made)
    }
    return made
  }
  // TRACE_ACTIVE_SPAN installed one already; a host may have installed its own.
  const active = contextManagerInstalled()
  return (tool, request, carrier, mcp) => {
    const parent = typeof carrier?.traceparent === 'string' ? propagation.extract(ROOT_CONTEXT, carrier) : parentOf(request)
    const facts = factsOf(tool)
    const span = new CallSpan(tracing.tracer, facts, parent, active)
    if (mcp !== undefined) nameMcpSpans(request, span, tool, mcp)
    else if (carrier === undefined) nameToolRoute(request, tool, facts)
    return span
  }
}

/**
 * Whether some context manager is installed: toolgate's with TRACE_ACTIVE_SPAN, or a host's that
 * embeds the gateway with its own OpenTelemetry setup. Either way a tool's code can see its call's
 * span as the active one, so it runs inside it; with none, a context would be made for nothing.
 * Asked once, when the gateway is built (a host sets OpenTelemetry up before).
 */
function contextManagerInstalled (): boolean {
  const probe = createContextKey('toolgate context manager probe')
  return context.with(ROOT_CONTEXT.setValue(probe, true), () => context.active().getValue(probe) === true)
}

/**
 * One route serves every tool (`POST /tools/:id`); the server span names the tool's own
 * operation, as the document has it (`POST /tools/get_weather`): the ids are the catalog's, a
 * bounded set, never what a caller sent (an unknown id never reaches here).
 */
function nameToolRoute (request: FastifyRequest, tool: AnyTool, facts: ToolSpanFacts): void {
  const server = request.serverSpan
  // A span the sampler left out records no name: spare it the work.
  if (server === null || !server.isRecording) return
  // (Fastify builds a dozen-field object at each read of `routeOptions`.)
  const pattern = request.routeOptions.url
  if (pattern === undefined) return
  let route = facts.routes.get(pattern)
  if (route === undefined) facts.routes.set(pattern, route = pattern.replace(/:id$/, tool.id))
  server.rename(`${request.method} ${route}`, route)
}

/** The request's server span, else (an untraced path) whatever the caller's headers carry. */
function parentOf (request: FastifyRequest): Context {
  return request.serverSpan?.context ?? propagation.extract(ROOT_CONTEXT, request.headers)
}

/**
 * The MCP semantic conventions: the server span of an MCP request is named `{method} {target}`
 * (`tools/call get_weather`) and says the method, the tool and the JSON-RPC id; the call's own
 * `execute_tool` span carries the method too.
 */
function nameMcpSpans (request: FastifyRequest, call: CallSpan, tool: AnyTool, mcp: McpCallFacts): void {
  const server = request.serverSpan
  const serverRecorded = server !== null && server.isRecording
  if (!call.span.isRecording() && !serverRecorded) return
  const attributes = {
    'mcp.method.name': mcp.method,
    ...(mcp.protocolVersion === undefined ? {} : { 'mcp.protocol.version': mcp.protocolVersion }),
    ...(mcp.requestId === undefined ? {} : { 'jsonrpc.request.id': String(mcp.requestId) }),
  }
  setOwnAttributes(call.span, attributes)
  if (!serverRecorded) return
  server.rename(`${mcp.method} ${tool.id}`, undefined, { ...attributes, 'gen_ai.tool.name': tool.id, 'gen_ai.operation.name': 'execute_tool' })
}
