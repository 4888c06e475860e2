import type { FastifyInstance, FastifyRequest } from 'fastify'
import fp from 'fastify-plugin'
import type { Principal } from '../src/app-context.js'
import { createAuthenticator, createPermissionRules } from '../src/auth/index.js'
import type { Config } from '../src/config.js'
import { GatewayError } from '../src/index.js'

declare module 'fastify' {
  interface FastifyRequest {
    /** Who is calling; set by the authentication hook of the scope that needs it. */
    principal: Principal
  }
  interface FastifyInstance {
    /** May this principal call this tool, by the configured allow/deny rules? */
    isPermitted: (principalId: string, toolId: string) => boolean
    /** False when no rules are configured: everything is permitted and no check is needed. */
    hasPermissionRules: boolean
  }
}

export interface AuthOptions {
  readonly config: Pick<Config, 'apiKeys' | 'jwt' | 'authDisabled' | 'rules'>
  /** Told of every failed authentication, with a bounded reason (for metrics). */
  readonly onFailure?: (reason: string, request: FastifyRequest) => void
}

/**
 * Authentication for the scope it is registered in, and only that scope (encapsulation, not
 * URL matching): it runs in `onRequest`, before the body is even read.
 */
export const authPlugin = fp(async function auth (app: FastifyInstance, options: AuthOptions) {
  const authenticate = createAuthenticator(options.config)
  app.decorateRequest('principal', null as unknown as Principal)
  app.decorate('isPermitted', createPermissionRules(options.config.rules))
  app.decorate('hasPermissionRules', options.config.rules.length > 0)
  // Callback style: an API key is checked synchronously, so most calls make no promise here.
  app.addHook('onRequest', (request, _reply, done) => {
    const fail = (error: unknown): void => {
      if (error instanceof GatewayError && options.onFailure !== undefined) {
        options.onFailure(typeof error.extensions.reason === 'string' ? error.extensions.reason : 'invalid', request)
      }
      done(error as Error)
    }
    let principal
    try {
      principal = authenticate({ authorization: request.headers.authorization, 'x-api-key': request.headers['x-api-key'] })
    } catch (error) {
      fail(error)
      return
    }
    if (principal instanceof Promise) {
      principal.then(resolved => { request.principal = resolved; done() }, fail)
      return
    }
    request.principal = principal
    done()
  })
}, { name: 'toolgate-auth' })
