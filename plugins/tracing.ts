import { FastifyOtelInstrumentation } from '@fastify/otel'
import { propagation, ROOT_CONTEXT, type Context } from '@opentelemetry/api'
import type { FastifyInstance, FastifyRequest } from 'fastify'
import type { AnyTool } from '../src/index.js'
import { CallSpan, toolSpanAttributes, type ToolSpanAttributes } from '../src/services/tracing/call-span.js'
import type { Tracing } from '../src/services/tracing/types.js'

/** Probes and scrapes: a span each would only bury the calls an operator looks for. */
const UNTRACED = new Set(['/healthz', '/readyz', '/metrics'])

/**
 * The HTTP server span of every request, from `@fastify/otel` (the maintained instrumentation),
 * named `{method} {route}` as the HTTP conventions ask. Per-hook and handler spans are left off:
 * the tool call's own span says what happened inside. Registered first, so it sees every route.
 */
export async function registerHttpTracing (app: FastifyInstance, tracing: Tracing): Promise<void> {
  const instrumentation = new FastifyOtelInstrumentation({
    instrumentHooks: false,
    instrumentHandler: false,
    ignorePaths: ({ url }) => UNTRACED.has(url),
    requestHook: (span, request) => {
      if (request.routeOptions.url !== undefined) span.updateName(`${request.method} ${request.routeOptions.url}`)
    },
  })
  instrumentation.setTracerProvider(tracing.provider)
  await app.register(instrumentation.plugin())
  app.addHook('onClose', async () => { await tracing.shutdown() })
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
  const attributes = new WeakMap<AnyTool, ToolSpanAttributes>()
  const attributesOf = (tool: AnyTool): ToolSpanAttributes => {
    let made = attributes.get(tool)
    if (made === undefined) {
      made = toolSpanAttributes(tool)
      attributes.set(tool, made)
    }
    return made
  }
  return (tool, request, carrier, mcp) => {
    const parent = typeof carrier?.traceparent === 'string' ? propagation.extract(ROOT_CONTEXT, carrier) : parentOf(request)
    const span = new CallSpan(tracing.tracer, tool, attributesOf(tool), parent)
    if (mcp !== undefined) nameMcpSpans(request, span, tool, mcp)
    else if (carrier === undefined) nameToolRoute(request, tool)
    return span
  }
}

/**
 * One route serves every tool (`POST /tools/:id`); the server span names the tool's own
 * operation, as the document has it (`POST /tools/get_weather`): the ids are the catalog's, a
 * bounded set, never what a caller sent (an unknown id never reaches here).
 */
function nameToolRoute (request: FastifyRequest, tool: AnyTool): void {
  const server = request.opentelemetry().span
  // A span the sampler left out records no name: spare it the work.
  if (server === null || !server.isRecording() || request.routeOptions.url === undefined) return
  const route = request.routeOptions.url.replace(/:id$/, tool.id)
  server.updateName(`${request.method} ${route}`)
  server.setAttribute('http.route', route)
}

/** The request span when `@fastify/otel` made one, else whatever the caller's headers carry. */
function parentOf (request: FastifyRequest): Context {
  const otel = request.opentelemetry()
  if (otel.context !== null) return otel.context
  return propagation.extract(ROOT_CONTEXT, request.headers)
}

/**
 * The MCP semantic conventions: the server span of an MCP request is named `{method} {target}`
 * (`tools/call get_weather`) and says the method, the tool and the JSON-RPC id; the call's own
 * `execute_tool` span carries the method too.
 */
function nameMcpSpans (request: FastifyRequest, call: CallSpan, tool: AnyTool, mcp: McpCallFacts): void {
  const server = request.opentelemetry().span
  const serverRecorded = server !== null && server.isRecording()
  if (!call.span.isRecording() && !serverRecorded) return
  const attributes = {
    'mcp.method.name': mcp.method,
    ...(mcp.protocolVersion === undefined ? {} : { 'mcp.protocol.version': mcp.protocolVersion }),
    ...(mcp.requestId === undefined ? {} : { 'jsonrpc.request.id': String(mcp.requestId) }),
  }
  call.span.setAttributes(attributes)
  if (!serverRecorded) return
  server.updateName(`${mcp.method} ${tool.id}`)
  server.setAttributes({ ...attributes, 'gen_ai.tool.name': tool.id, 'gen_ai.operation.name': 'execute_tool' })
}
