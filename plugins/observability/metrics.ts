import type { FastifyInstance, FastifyReply } from 'fastify'
import fp from 'fastify-plugin'
import { ERRORS, GatewayError, type ToolgateError } from '../../src/index.js'
import type { GatewayMetrics } from '../../src/services/metrics/gateway-metrics.js'

/**
 * Count a tool-route request that failed before the pipeline ran (problem plugin's
 * `onToolRouteFailure`): its outcome is the error code's, from the one catalogue.
 */
export function countEarlyFailure (metrics: GatewayMetrics): (toolId: string, error: ToolgateError, _request: unknown, reply: FastifyReply) => void {
  return (toolId, error, _request, reply) => {
    metrics.observeOutcome(toolId, error instanceof GatewayError ? ERRORS[error.code].outcome : 'tool_error', reply.elapsedTime / 1000)
  }
}

const OPENMETRICS = 'application/openmetrics-text; version=1.0.0; charset=utf-8'

/**
 * `GET /metrics`. With `openMetrics` (tracing is on), a scraper that asks for OpenMetrics gets
 * it, duration exemplars with trace ids included; everyone else gets the Prometheus text format.
 */
export const metricsPlugin = fp(async function metrics (app: FastifyInstance, options: { metrics: GatewayMetrics, openMetrics?: boolean }) {
  const { metrics: gatewayMetrics } = options
  app.get('/metrics', { schema: { hide: true } }, async (request, reply) => {
    if (options.openMetrics === true && request.headers.accept?.includes('application/openmetrics-text') === true) {
      return reply.type(OPENMETRICS).send(await gatewayMetrics.renderOpenMetrics())
    }
    const body = await gatewayMetrics.render()
    return reply.type(gatewayMetrics.contentType).send(body)
  })
}, { name: 'toolgate-metrics' })
