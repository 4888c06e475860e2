import type { FastifyInstance, FastifyReply } from 'fastify'
import fp from 'fastify-plugin'
import { ERRORS, GatewayError, type ToolgateError } from '../src/index.js'
import type { GatewayMetrics } from '../src/services/metrics/gateway-metrics.js'

/**
 * Count a tool-route request that failed before the pipeline ran (problem plugin's
 * `onToolRouteFailure`): its outcome is the error code's, from the one catalogue.
 */
export function countEarlyFailure (metrics: GatewayMetrics): (toolId: string, error: ToolgateError, _request: unknown, reply: FastifyReply) => void {
  return (toolId, error, _request, reply) => {
    metrics.observeOutcome(toolId, error instanceof GatewayError ? ERRORS[error.code].outcome : 'tool_error', reply.elapsedTime / 1000)
  }
}

/** `GET /metrics`. */
export const metricsPlugin = fp(async function metrics (app: FastifyInstance, options: { metrics: GatewayMetrics }) {
  const { metrics: gatewayMetrics } = options
  app.get('/metrics', { schema: { hide: true } }, async (_request, reply) => {
    const body = await gatewayMetrics.render()
    return reply.type(gatewayMetrics.contentType).send(body)
  })
}, { name: 'toolgate-metrics' })
