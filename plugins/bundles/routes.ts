import type { FastifyInstance, FastifyRequest, FastifySchemaCompiler } from 'fastify'
import type { ZodTypeProvider } from 'fastify-type-provider-zod'
import { z } from 'zod'
import { SCOPES, type GatewayApp, type GatewayFacts } from '../../src/core/app-context.js'
import { isAliased, type NamedTool } from '../../src/core/bundles/named-tool.js'
import { requireScope } from '../../src/services/auth/index.js'
import { GatewayError } from '../../src/index.js'
import type { LiveBundles } from '../../src/services/bundles/live-bundles.js'
import type { GatewayCalls } from '../../src/services/calls/gateway-calls.js'
import { specsOf } from '../../src/services/llm-specs/formats.js'
import { nameMapsFor } from '../../src/services/llm-specs/names.js'
import { listingOf, ToolListingSchema, type ToolListing } from '../../src/services/tool-listing.js'
import { problemResponses } from '../http/problem-schemas.js'
import type { CallTracer } from '../observability/tracing.js'
import type { ToolDocuments } from '../openapi/tool-document.js'
import { SECURITY } from '../openapi/tool-operation.js'
import { CallHeaders, CallQuery, ProviderSpecs, SpecQuery } from '../tools/call-schemas.js'
import { optionsValidator } from '../tools/call-options.js'
import { gatewayAppOf } from '../tools/gateway-app.js'
import { RestCalls } from '../tools/rest-calls.js'
import { bundleFor, visibleIn } from './tool-view.js'
import { searched } from '../tools/searched.js'
import { callerDocs } from '../openapi/caller-docs.js'
import { bundleView, type ToolView } from '../../src/services/bundles/tool-view.js'

export interface BundleRoutesOptions {
  readonly bundles: LiveBundles
  readonly calls: GatewayCalls
  readonly facts: GatewayFacts
  readonly bodyLimit: number
  readonly traceCall?: CallTracer
  readonly documents: ToolDocuments
  /** Serve each bundle's Swagger UI at `/bundles/{bundle}/docs`, as the catalog's at `/docs`. */
  readonly docsUi: boolean
}

const BundleParams = z.object({ bundle: z.string().max(64) })
const BundleToolParams = BundleParams.extend({ name: z.string().max(64) })

const BundleListingSchema = z.object({
  name: z.string(),
  description: z.string(),
  discovery: z.boolean().describe('Its MCP endpoint lists three tools (search, describe, call) instead of every tool'),
  tools: z.number().int().describe('The tools of the bundle you may call now'),
  mcp: z.string().describe('Its MCP endpoint (Streamable HTTP)'),
  openapi: z.string().describe('Its OpenAPI document'),
}).meta({ id: 'BundleListing' })

/**
 * A bundle's own addresses beside `/mcp/{bundle}`: `GET /bundles` (those the caller may use),
 * its tools' listing and exports, one tool, a call, and its OpenAPI document. Each is the
 * whole catalog's route over the bundle's view: the same listing, call and document code.
 */
export async function bundleRoutes (parent: FastifyInstance, options: BundleRoutesOptions): Promise<void> {
  const app = parent.withTypeProvider<ZodTypeProvider>()
  const { bundles, calls, facts, documents } = options
  const { catalog } = calls
  const timeout = catalog.options.defaultTimeoutMs
  app.removeContentTypeParser(['text/plain'])
  const rest = new RestCalls(app, { calls, facts, traceCall: options.traceCall })
  const visible = (request: FastifyRequest, bundle: string): { readonly named: NamedTool<GatewayApp>[], readonly view: ToolView<GatewayApp> } => {
    const view = bundleView<GatewayApp>(bundleFor(request, bundles, bundle))
    return { view, named: visibleIn(view, app, request, catalog.current, gatewayAppOf(request, facts)) }
  }
  const base = `${app.prefix}/bundles`

  app.get('/bundles', {
    schema: {
      operationId: 'listBundles', tags: ['gateway'], summary: 'List the bundles you may use',
      description: 'The operator\'s curated tool sets you may use, each with its own MCP endpoint and OpenAPI document.',
      security: SECURITY, response: { 200: z.object({ bundles: z.array(BundleListingSchema) }), ...problemResponses([401, 403]) },
    },
  }, async request => {
    requireScope(request.principal, SCOPES.read)
    const usable = bundles.current.list().filter(bundle => bundle.mayUse(request.principal))
    return {
      bundles: usable.map(bundle => ({
        name: bundle.name,
        description: bundle.description,
        discovery: bundle.discovery,
        tools: visible(request, bundle.name).named.length,
        mcp: `${app.prefix}/mcp/${bundle.name}`,
        openapi: `${base}/${bundle.name}/openapi.json`,
      })),
    }
  })

  app.get('/bundles/:bundle/tools', {
    schema: {
      operationId: 'listBundleTools', tags: ['gateway'], summary: 'List the tools of a bundle',
      description: 'As `GET /tools` (with `q` to search, `format` for a provider), over the bundle\'s tools, under the bundle\'s names.',
      security: SECURITY, params: BundleParams, querystring: SpecQuery,
      response: { 200: z.union([z.object({ tools: z.array(ToolListingSchema) }), ProviderSpecs]), ...problemResponses([400, 401, 403, 404]) },
    },
  }, async request => {
    requireScope(request.principal, SCOPES.read)
    const { view, named } = visible(request, request.params.bundle)
    const { format, strict, q, limit } = request.query
    const found = searched(view.all(catalog.current), named, q, limit, timeout)
    if (format !== undefined) return specsOf(format, found, { defaultTimeoutMs: timeout, strict: strict === true, names: nameMapsFor(catalog.current).get(format)! })
    return { tools: found.map(listingAs) }
  })

  app.get('/bundles/:bundle/tools/:name', {
    schema: {
      operationId: 'getBundleTool', tags: ['gateway'], summary: 'Describe one tool of a bundle', security: SECURITY,
      params: BundleToolParams, headers: CallHeaders.pick({ 'x-session-id': true }),
      response: { 200: ToolListingSchema, ...problemResponses([401, 403, 404]) },
    },
  }, async request => {
    requireScope(request.principal, SCOPES.read)
    const found = visible(request, request.params.bundle).named.find(named => named.name === request.params.name)
    if (found === undefined) throw new GatewayError('TOOLGATE_NOT_FOUND', `no tool "${request.params.name}" in bundle "${request.params.bundle}"`)
    return listingAs(found)
  })

  // Each tool's operation is in the bundle's document; this route serves them all.
  app.post('/bundles/:bundle/tools/:name', {
    config: { toolCall: request => toolIdIn(request) },
    bodyLimit: options.bodyLimit,
    schema: { hide: true, querystring: CallQuery, headers: CallHeaders },
    validatorCompiler: optionsValidator(true) as FastifySchemaCompiler<unknown>,
    serializerCompiler: () => data => JSON.stringify(data),
  }, async (request, reply) => {
    const { bundle, name } = request.params as { bundle: string, name: string }
    const view = bundleView<GatewayApp>(bundleFor(request, bundles, bundle))
    const named = view.get(catalog.current, name)
    // A tool outside the bundle is unknown here, exactly as one that does not exist.
    if (named === undefined) throw new GatewayError('TOOLGATE_NOT_FOUND', `no tool "${name}" in bundle "${bundle}"`)
    requireScope(request.principal, SCOPES.call)
    return await rest.call(named.tool, request, reply, bundle)
  })

  // Its document and docs page, as the catalog's are served (and published with DOCS_PUBLIC).
  await app.register(async scope => {
    await scope.register(callerDocs, {
      documentOf: (request, whole) => {
        const { bundle } = request.params as { bundle: string }
        const set = catalog.current
        const view = bundleView<GatewayApp>(bundleFor(request, bundles, bundle))
        const named = whole ? view.all(set) : visibleIn(view, app, request, set, gatewayAppOf(request, facts))
        return documents.views(set).bundleJson(view.bundle!, named, name => `${base}/${bundle}/tools/${name}`)
      },
      ui: options.docsUi,
    })
  }, { prefix: '/bundles/:bundle' })

  /** The tool a bundle's call route names (for rate limits and early failures): its id, not its name in the bundle. */
  function toolIdIn (request: FastifyRequest): string | undefined {
    const { bundle, name } = request.params as { bundle?: string, name?: string }
    if (bundle === undefined || name === undefined) return undefined
    return bundles.current.get(bundle)?.membersOf(catalog.current.tools).byName.get(name)?.tool.id
  }

  function listingAs (named: NamedTool): ToolListing {
    const listing = listingOf(named.tool, timeout)
    return isAliased(named) ? { ...listing, name: named.name, description: named.description } : listing
  }
}
