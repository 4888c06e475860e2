import type { FastifyInstance } from 'fastify'
import type { ZodTypeProvider } from 'fastify-type-provider-zod'
import { z } from 'zod'
import { SCOPES } from '../../src/core/app-context.js'
import { requireScope } from '../../src/services/auth/index.js'
import type { Upstreams } from '../../src/services/upstreams/upstreams.js'
import { problemResponses } from '../http/problem-schemas.js'
import { SECURITY } from '../openapi/tool-operation.js'

export const UpstreamStatusSchema = z.object({
  name: z.string(),
  transport: z.enum(['stdio', 'http', 'sse', 'openapi']).describe('`openapi`: an HTTP service fronted through its OpenAPI document'),
  state: z.enum(['starting', 'up', 'down', 'closed']),
  required: z.boolean().describe('Readiness waits for this upstream'),
  tools: z.number().int().describe('Tools it listed last'),
  restarts: z.number().int().describe('Restarts or reconnections after the first connection'),
  inFlight: z.number().int(),
  since: z.string().describe('When it entered this state (RFC 3339)'),
  protocolVersion: z.string().optional().describe('The MCP protocol version negotiated, while up'),
  lastError: z.string().optional().describe('Why it is down (a service: why its last reload failed); configured secrets are never shown'),
  auth: z.enum(['client_credentials', 'token_exchange', 'link', 'identity']).optional().describe('How its calls reach it beyond its static headers: the gateway\'s own OAuth token, the caller\'s exchanged, or the caller asserted; absent: the static headers alone. Never the credential.'),
  children: z.number().int().optional().describe('A stdio server run once per person (`auth` with `env`): its children running now'),
  skipped: z.array(z.object({ operation: z.string(), why: z.string() })).readonly().optional().describe('Operations of a service that are not served, and why'),
}).meta({ id: 'UpstreamStatus' })

/** `GET /upstreams`: each upstream's state, for operators; authenticated like the listing. */
export async function upstreamRoutes (parent: FastifyInstance, options: { readonly upstreams: Upstreams }): Promise<void> {
  const app = parent.withTypeProvider<ZodTypeProvider>()
  app.get('/upstreams', {
    schema: {
      operationId: 'listUpstreams', tags: ['gateway'], summary: 'The state of every upstream MCP server and HTTP service',
      description: 'Whether each upstream of the upstreams file is up, its restarts and calls in flight. Its tools answer 503 with `Retry-After` while it is down.',
      security: SECURITY, response: { 200: z.object({ upstreams: z.array(UpstreamStatusSchema) }), ...problemResponses([401, 403]) },
    },
  }, async request => {
    requireScope(request.principal, SCOPES.read)
    return { upstreams: upstreamViews(options.upstreams) }
  })
}

/** Every upstream's status as the routes answer it. */
export function upstreamViews (upstreams: Upstreams): Array<z.output<typeof UpstreamStatusSchema>> {
  return upstreams.status().map(status => ({ ...status, since: new Date(status.since).toISOString() }))
}
