import type { FastifyInstance } from 'fastify'
import fp from 'fastify-plugin'
import type { Outcome } from '../src/index.js'
import type { GatewayMetrics } from '../src/metrics/gateway-metrics.js'

/** Outcomes of tool-route failures that happen before the pipeline (auth, transport). */
const OUTCOME_BY_STATUS: Record<number, Outcome> = {
  400: 'invalid_input', 401: 'unauthenticated', 403: 'forbidden', 404: 'not_found', 409: 'conflict',
  413: 'invalid_input', 415: 'invalid_input', 429: 'rate_limited', 503: 'unavailable',
}

/** `GET /metrics`, and counting of tool-route requests that never reached the pipeline. */
export const metricsPlugin = fp(async function metrics (app: FastifyInstance, options: { metrics: GatewayMetrics }) {
  const { metrics: gatewayMetrics } = options
  app.addHook('onResponse', (request, reply, done) => {
    const toolId = request.routeOptions.config.toolId
    if (toolId !== undefined && request.callRecord === null) {
      gatewayMetrics.observeOutcome(toolId, OUTCOME_BY_STATUS[reply.statusCode] ?? 'internal', reply.elapsedTime / 1000)
    }
    done()
  })
  app.get('/metrics', { schema: { hide: true } }, async (_request, reply) => {
    const body = await gatewayMetrics.render()
    return reply.type(gatewayMetrics.contentType).send(body)
  })
}, { name: 'toolgate-metrics' })
