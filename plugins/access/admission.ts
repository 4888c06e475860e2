import type { FastifyInstance, FastifyRequest } from 'fastify'
import fp from 'fastify-plugin'
import type { Principal } from '../../src/core/app-context.js'
import { createAuthenticator, createPermissionRules, PUBLIC_READER } from '../../src/services/auth/index.js'
import type { Config } from '../../src/services/config.js'
import { GatewayError } from '../../src/index.js'
import { PressureMonitor, type Pressure } from '../../src/services/pressure.js'
import { documentStatuses } from '../http/problem-schemas.js'
import { AuthFailureThrottle } from '../../src/services/auth/failure-throttle.js'

declare module 'fastify' {
  interface FastifyRequest {
    /** Who is calling; set by the admission hook of the scope that needs it. */
    principal: Principal
  }
  interface FastifyInstance {
    /** May this principal call this tool, by the configured allow/deny rules? */
    isPermitted: (principalId: string, toolId: string) => boolean
    /** False when no rules are configured: everything is permitted and no check is needed. */
    hasPermissionRules: boolean
  }
}

export interface AdmissionOptions {
  readonly config: Pick<Config, 'apiKeys' | 'jwt' | 'authDisabled' | 'docsPublic' | 'rules' | 'maxEventLoopDelayMs' | 'maxHeapUsedBytes' | 'maxRssBytes' | 'authFailureLimit' | 'authFailureWindowMs'>
  /** Told of every failed authentication, with a bounded reason (for metrics). */
  readonly onAuthFailure?: (reason: string, request: FastifyRequest) => void
}

/**
 * Who gets into the scope it is registered in, and only that scope (encapsulation, not URL
 * matching): nobody while the process is overloaded (503, the cheapest refusal), then only
 * authenticated callers (401). One `onRequest` hook, before the body is even read; health,
 * readiness and metrics live outside the scope and keep answering under pressure, so
 * operators can still see what is happening.
 */
export const admissionPlugin = fp(async function admission (app: FastifyInstance, options: AdmissionOptions) {
  const { config, onAuthFailure } = options
  const authenticate = createAuthenticator(config)
  const pressure = new PressureMonitor(config)
  const throttle = new AuthFailureThrottle({ maxFailures: config.authFailureLimit, windowMs: config.authFailureWindowMs })
  app.decorateRequest('principal', null as unknown as Principal)
  app.decorate('isPermitted', createPermissionRules(config.rules))
  app.decorate('hasPermissionRules', config.rules.length > 0)
  app.addHook('onClose', async () => { pressure.close() })
  // Registered after the document plugin, so this runs once its onReady work is done.
  app.addHook('onReady', async () => { pressure.reset() })
  // What this hook answers, every operation of the scope documents: 401, 429 (failing
  // authentications), 503 (overload, key set unavailable).
  app.addHook('onRoute', route => { documentStatuses(route as { schema?: Record<string, unknown> }, [401, 429, 503]) })
  // Callback style: an API key is checked synchronously, so most calls make no promise here.
  app.addHook('onRequest', (request, _reply, done) => {
    if (pressure.current !== undefined) {
      done(overloaded(pressure.current))
      return
    }
    const fail = (error: unknown): void => {
      if (error instanceof GatewayError && error.extensions.reason === 'missing' && openToAnonymous(request, config.docsPublic)) {
        request.principal = PUBLIC_READER
        done()
        return
      }
      // Only a failure is throttled, after the credential was checked: see AuthFailureThrottle.
      const waitMs = error instanceof GatewayError && error.code === 'TOOLGATE_UNAUTHENTICATED' && throttle.enabled ? throttle.failed(request.ip) : 0
      if (waitMs > 0) {
        onAuthFailure?.('throttled', request)
        done(throttled(waitMs, error))
        return
      }
      if (error instanceof GatewayError && onAuthFailure !== undefined) {
        onAuthFailure(typeof error.extensions.reason === 'string' ? error.extensions.reason : 'invalid', request)
      }
      done(error as Error)
    }
    let principal
    try {
      principal = authenticate(request.headers, request.raw.rawHeaders)
    } catch (error) {
      fail(error)
      return
    }
    if (principal instanceof Promise) {
      principal.then(resolved => {
        request.principal = resolved
        done()
      }, fail)
      return
    }
    request.principal = principal
    done()
  })
}, { name: 'toolgate-admission' })

/** A route marked open (the docs UI; the document when published) lets a caller without credentials in. */
function openToAnonymous (request: FastifyRequest, docsPublic: boolean): boolean {
  const anonymous = request.routeOptions.config.anonymous
  return anonymous === 'always' || (anonymous === 'docs' && docsPublic)
}

function throttled (waitMs: number, failure: unknown): GatewayError {
  const retryAfter = Math.max(1, Math.ceil(waitMs / 1000))
  return new GatewayError('TOOLGATE_RATE_LIMITED', `too many failed authentications from this address; retry after ${retryAfter} s`, { retryAfter }, { cause: failure })
}

function overloaded ({ type, value }: Pressure): GatewayError {
  return new GatewayError('TOOLGATE_OVERLOADED', `the gateway is under pressure (${type} ${Math.round(value)}); retry shortly`, { retryAfter: 5 })
}
