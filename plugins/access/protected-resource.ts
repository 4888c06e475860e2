import type { FastifyInstance, FastifyRequest } from 'fastify'
import { SCOPES } from '../../src/core/app-context.js'
import type { Config } from '../../src/services/config.js'
import { MCP_PATH } from '../mcp/routes.js'

const WELL_KNOWN = '/.well-known/oauth-protected-resource'

/**
 * RFC 9728 protected resource metadata, served when JWT bearer tokens are configured: where
 * a client (an MCP host, most of all) gets a token for this gateway. Two documents: the
 * gateway as a whole, and `/mcp` at its path-suffixed address, which MCP clients try first.
 * The resource URL is the request's own origin: behind a proxy, the one it forwards
 * (`TRUST_PROXY`; in a host app, the host's own `trustProxy`).
 */
/**
 * The scopes clients are told of: those of calling and deciding tools. MCP clients ask for every
 * scope listed here, so the operators' `gateway:read` (the console) is left out: a tool caller
 * never holds it by default.
 */
const CALLER_SCOPES = [SCOPES.read, SCOPES.call, SCOPES.approve]

export async function protectedResourceRoutes (app: FastifyInstance, options: { jwt: NonNullable<Config['jwt']> }): Promise<void> {
  const { jwt } = options
  const metadata = (request: FastifyRequest, path: string): Record<string, unknown> => ({
    resource: `${originOf(request)}${path}`,
    authorization_servers: [jwt.issuer],
    scopes_supported: CALLER_SCOPES,
    bearer_methods_supported: ['header'],
    resource_name: 'toolgate',
  })
  app.get(WELL_KNOWN, { schema: { hide: true } }, async request => metadata(request, ''))
  app.get(`${WELL_KNOWN}${MCP_PATH}`, { schema: { hide: true } }, async request => metadata(request, MCP_PATH))
}

/**
 * The `resource_metadata` parameter a bearer challenge gets (RFC 9728 section 5.1): the
 * document of the MCP endpoint for MCP requests, of the gateway for everything else.
 */
export function resourceMetadataParam (request: FastifyRequest): string {
  const path = request.url.split('?')[0] === MCP_PATH ? `${WELL_KNOWN}${MCP_PATH}` : WELL_KNOWN
  return `resource_metadata="${originOf(request)}${path}"`
}

function originOf (request: FastifyRequest): string {
  return `${request.protocol}://${request.host}`
}
