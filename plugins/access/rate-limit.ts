import type { FastifyInstance, FastifyRequest } from 'fastify'
import fp from 'fastify-plugin'
import type { Redis } from 'ioredis'
import type { Config } from '../../src/services/config.js'
import { principalKey, principalToolKey } from '../../src/services/principal-keys.js'
import { GatewayError } from '../../src/index.js'
import { toolIdOf } from '../tools/call-route.js'

export interface RateLimitOptions {
  readonly config: Pick<Config, 'rateLimitMax' | 'rateLimitWindowMs' | 'toolLimits' | 'redisPrefix'>
  /** Counters live here when set, so every replica counts against the same budget. */
  readonly redis?: Redis
}

/**
 * Rate limits per principal (and per principal and tool where a tool has its own limit). Must
 * be registered after authentication in the same scope: the key is the principal, so it runs
 * in `preParsing`, after `onRequest` authenticated the caller and before the body is read.
 *
 * When the shared store cannot be reached the limiter fails open (and logs): a Redis outage
 * must not take down calls that need no shared state. Idempotent calls fail closed on their own.
 */
export const rateLimitPlugin = fp(async function rateLimiting (app: FastifyInstance, options: RateLimitOptions) {
  const { config } = options
  const toolMax = (request: FastifyRequest): number | undefined => {
    const toolId = toolIdOf(request)
    // The id is the caller's spelling: only an own key of the configured limits counts.
    return toolId === undefined || !Object.hasOwn(config.toolLimits, toolId) ? undefined : config.toolLimits[toolId]?.rateLimitMax
  }
  // Loaded only when a limit is configured: most gateways never pay for it.
  const { default: rateLimit } = await import('@fastify/rate-limit')
  await app.register(rateLimit, {
    global: true,
    hook: 'preParsing',
    timeWindow: config.rateLimitWindowMs,
    max: request => toolMax(request) ?? config.rateLimitMax,
    allowList: request => (toolMax(request) ?? config.rateLimitMax) === 0,
    keyGenerator: request => {
      const principal = request.principal.id
      return toolMax(request) === undefined ? principalKey(principal) : principalToolKey(principal, toolIdOf(request)!)
    },
    redis: options.redis,
    nameSpace: `${config.redisPrefix}rate:`,
    skipOnError: true,
    enableDraftSpec: true,
    errorResponseBuilder: (_request, context) => new GatewayError('TOOLGATE_RATE_LIMITED', `the limit of ${context.max} calls per window is used up; retry after ${Math.max(1, Math.ceil(context.ttl / 1000))} s`, { retryAfter: Math.max(1, Math.ceil(context.ttl / 1000)) }),
  })
}, { name: 'toolgate-rate-limit' })

/** Rate limiting is on when there is a global limit or any tool has its own. */
export function rateLimitingEnabled (config: RateLimitOptions['config']): boolean {
  return config.rateLimitMax > 0 || Object.values(config.toolLimits).some(limit => limit.rateLimitMax !== undefined)
}
