import type { FastifyInstance, FastifyRequest } from 'fastify'
import type { GatewayApp, GatewayFacts } from '../../src/core/app-context.js'
import { GatewayError, type AnyTool, type ToolSet } from '../../src/index.js'
import { domainOf } from '../../src/services/principal-keys.js'
import { SESSION_ID } from './call-schemas.js'

/**
 * The app a request binds for its calls: who calls, and in which concurrency domain. Sessions
 * are per principal: one caller cannot queue behind another's session.
 */
export function gatewayAppOf (request: FastifyRequest, facts: GatewayFacts): GatewayApp {
  const session = single(request.headers['x-session-id'])
  if (session !== undefined && !SESSION_ID.test(session)) {
    throw new GatewayError('TOOLGATE_INVALID_INPUT', 'X-Session-Id must be 1 to 128 characters of [A-Za-z0-9_.:@-]', { errors: [{ pointer: '/headers/x-session-id', message: 'invalid session id', code: 'invalid_format' }] })
  }
  return {
    principal: request.principal,
    requestId: request.id,
    domain: domainOf(request.principal.id, session),
    log: request.log,
    gateway: facts,
  }
}

/** What `GET /tools` lists for this request: active for its app, and permitted. */
export function visibleToolsOf (scope: FastifyInstance, request: FastifyRequest, set: ToolSet<GatewayApp>, facts: GatewayFacts): AnyTool<GatewayApp>[] {
  return set.active(gatewayAppOf(request, facts)).filter(tool => scope.isPermitted(request.principal.id, tool.id))
}

/** The permission rules of one caller for the pipeline; none configured: no per-call check at all. */
export function permitFor (app: FastifyInstance, principalId: string): ((tool: AnyTool) => boolean) | undefined {
  if (!app.hasPermissionRules) return undefined
  return tool => app.isPermitted(principalId, tool.id)
}

function single (value: string | string[] | undefined): string | undefined {
  return Array.isArray(value) ? value[0] : value
}
