import type { FastifyInstance, FastifyRequest, FastifySchemaCompiler } from 'fastify'
import type { ZodTypeProvider } from 'fastify-type-provider-zod'
import { z } from 'zod'
import { SCOPES, type GatewayApp, type GatewayFacts } from '../../src/core/app-context.js'
import { requireScope } from '../../src/services/auth/index.js'
import { GatewayError, type AnyTool, type CallRecord, type ToolSet } from '../../src/index.js'
import type { GatewayCalls } from '../../src/services/calls/gateway-calls.js'
import { specsOf } from '../../src/services/llm-specs/formats.js'
import { nameMapsFor } from '../../src/services/llm-specs/names.js'
import { listingOf, ToolListingSchema } from '../../src/services/tool-listing.js'
import { callerDocs } from '../openapi/caller-docs.js'
import { ownNameOf, ownNamesOf } from '../../src/core/bundles/named-tool.js'
import { searched } from './searched.js'
import { gatewayAppOf, visibleToolsOf } from './gateway-app.js'
import { CallHeaders, CallQuery, ProviderSpecs, SpecQuery } from './call-schemas.js'
import { problemResponses } from '../http/problem-schemas.js'
import { RestCalls } from './rest-calls.js'
import { optionsValidator } from './call-options.js'
import type { ToolDocuments } from '../openapi/tool-document.js'
import { SECURITY } from '../openapi/tool-operation.js'
import type { CallTracer } from '../observability/tracing.js'
import './call-route.js'

declare module 'fastify' {
  interface FastifyRequest {
    /** The core's record of this request's tool call, once the pipeline ran. */
    callRecord: CallRecord | null
  }
}

export interface ToolRoutesOptions {
  /** Where every call enters the pipeline and is finished (its catalog is the one served). */
  readonly calls: GatewayCalls
  readonly facts: GatewayFacts
  /** Largest request body, set on each tool route so a host app's own limit does not apply. */
  readonly bodyLimit: number
  /** Serve the Swagger UI at /docs (the document at /openapi.json is always served, per caller). */
  readonly docsUi?: boolean
  /** Opens each call's span when tracing is on (absent: no span, no context, no cost). */
  readonly traceCall?: CallTracer
  /** The OpenAPI document of each catalog version, for `/openapi.json` and `/docs`. */
  readonly documents: ToolDocuments
}

/**
 * The tool surface: `GET /tools`, `GET /tools/{id}` and `POST /tools/{id}`, registered inside
 * the gateway's authenticated scope (`registerGateway`). One route calls every tool of the
 * catalog serving at the time, so tools come and go without touching the router; each request
 * reads one version of the catalog. The handlers translate HTTP to `invoke` and back and add
 * no tool semantics.
 */
export async function toolRoutes (parent: FastifyInstance, options: ToolRoutesOptions): Promise<void> {
  const app = parent.withTypeProvider<ZodTypeProvider>()
  const { calls, facts, traceCall, documents } = options
  const { catalog } = calls
  const timeout = catalog.options.defaultTimeoutMs
  // Tool calls take JSON only: anything else is 415, not a string handed to the input schema.
  app.removeContentTypeParser(['text/plain'])
  const rest = new RestCalls(app, { calls, facts, traceCall })

  const appOf = (request: FastifyRequest): GatewayApp => gatewayAppOf(request, facts)

  const visibleTools = (request: FastifyRequest, set: ToolSet<GatewayApp>): AnyTool<GatewayApp>[] => visibleToolsOf(app, request, set, facts)

  // The document and its UI, per caller, behind this scope's authentication.
  await app.register(callerDocs, {
    documentOf: (request, whole) => {
      const set = catalog.current
      const views = documents.views(set)
      return whole ? views.fullJson() : views.json(visibleTools(request, set).map(tool => tool.id))
    },
    ui: options.docsUi ?? true,
  })

  app.get('/tools', {
    schema: {
      operationId: 'listTools', tags: ['gateway'], summary: 'List the tools you may call',
      description: 'Every tool active for this caller, with its effects, flags and JSON Schemas. With `q`, the tools those words best describe, best first. With `format`, the same tools as the `tools` field of that provider\'s request body.',
      security: SECURITY, querystring: SpecQuery, response: { 200: z.union([z.object({ tools: z.array(ToolListingSchema) }), ProviderSpecs]), ...problemResponses([400, 401, 403]) },
    },
  }, async request => {
    requireScope(request.principal, SCOPES.read)
    const set = catalog.current
    const { format, strict, q, limit } = request.query
    const visible = searched(ownNamesOf(set.tools), visibleTools(request, set).map(ownNameOf), q, limit, timeout)
    if (format !== undefined) return specsOf(format, visible, { defaultTimeoutMs: timeout, strict: strict === true, names: nameMapsFor(set).get(format)! })
    return { tools: visible.map(named => listingOf(named.tool, timeout)) }
  })

  app.get('/tools/:id', {
    schema: {
      operationId: 'getTool', tags: ['gateway'], summary: 'Describe one tool', security: SECURITY,
      params: z.object({ id: z.string().max(64) }),
      headers: CallHeaders.pick({ 'x-session-id': true }),
      response: { 200: ToolListingSchema, ...problemResponses([401, 403, 404]) },
    },
  }, async request => {
    requireScope(request.principal, SCOPES.read)
    const tool = catalog.current.active(appOf(request)).find(t => t.id === request.params.id)
    if (tool === undefined || !app.isPermitted(request.principal.id, tool.id)) {
      throw new GatewayError('TOOLGATE_NOT_FOUND', `no tool "${request.params.id}"`)
    }
    return listingOf(tool, timeout)
  })

  // Each tool's own operation is in the document (tool-document.ts); this route serves them all.
  app.post('/tools/:id', {
    config: { toolCall: true },
    bodyLimit: options.bodyLimit,
    schema: { hide: true, querystring: CallQuery, headers: CallHeaders },
    validatorCompiler: optionsValidator(true) as FastifySchemaCompiler<unknown>,
    // parseOutput already validated the value: serialize, do not validate twice.
    serializerCompiler: () => data => JSON.stringify(data),
  }, async (request, reply) => {
    const toolId = (request.params as { id: string }).id
    const tool = catalog.get(toolId)
    // Unknown ids: authenticated first (step 1), then the same 404 an inactive tool gets (step 2).
    if (tool === undefined) throw new GatewayError('TOOLGATE_NOT_FOUND', `no tool "${toolId}"`)
    requireScope(request.principal, SCOPES.call)
    return await rest.call(tool, request, reply)
  })

}
