import { FastifyOtelInstrumentation } from '@fastify/otel'
import { propagation, ROOT_CONTEXT, type Context } from '@opentelemetry/api'
import type { FastifyInstance, FastifyRequest } from 'fastify'
import type { AnyTool } from '../src/index.js'
import { CallSpan, toolSpanAttributes, type ToolSpanAttributes } from '../src/services/tracing/call-span.js'
import type { Tracing } from '../src/services/tracing/setup.js'

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
export type CallTracer = (tool: AnyTool, request: FastifyRequest, carrier?: { readonly traceparent?: unknown, readonly tracestate?: unknown }) => CallSpan

export function callTracer (tracing: Tracing, tools: readonly AnyTool[]): CallTracer {
  const attributes = new Map<string, ToolSpanAttributes>(tools.map(tool => [tool.id, toolSpanAttributes(tool)]))
  return (tool, request, carrier) => {
    const parent = typeof carrier?.traceparent === 'string' ? propagation.extract(ROOT_CONTEXT, carrier) : parentOf(request)
    return new CallSpan(tracing.tracer, tool, attributes.get(tool.id) ?? toolSpanAttributes(tool), parent)
  }
}

/** The request span when `@fastify/otel` made one, else whatever the caller's headers carry. */
function parentOf (request: FastifyRequest): Context {
  const otel = request.opentelemetry()
  if (otel.context !== null) return otel.context
  return propagation.extract(ROOT_CONTEXT, request.headers)
}
