import underPressure from '@fastify/under-pressure'
import type { FastifyInstance } from 'fastify'
import fp from 'fastify-plugin'
import type { Config } from '../src/config.js'
import { GatewayError } from '../src/index.js'

/**
 * Refuse calls with 503 and `Retry-After` while the event loop lags or memory is past its
 * bound, before the process falls over. Registered in the tool scope: health, readiness and
 * metrics keep answering, so operators can still see what is happening.
 */
export const underPressurePlugin = fp(async function pressure (app: FastifyInstance, options: { config: Pick<Config, 'maxEventLoopDelayMs' | 'maxHeapUsedBytes' | 'maxRssBytes'> }) {
  const { config } = options
  await app.register(underPressure, {
    maxEventLoopDelay: config.maxEventLoopDelayMs,
    maxHeapUsedBytes: config.maxHeapUsedBytes,
    maxRssBytes: config.maxRssBytes,
    exposeStatusRoute: false,
    pressureHandler: async (_request, _reply, type, value) => {
      // under-pressure reports an interval with no event-loop samples at all as an Infinity
      // delay: one long block (start-up work) and then a whole second of 503s. The loop is
      // answering this very request, so that is no overload.
      if (type === 'eventLoopDelay' && value === Infinity) return
      throw new GatewayError('TOOLGATE_OVERLOADED', `the gateway is under pressure (${type}${value === undefined ? '' : ` ${Math.round(value)}`}); retry shortly`, { retryAfter: 5 })
    },
  })
}, { name: 'toolgate-under-pressure' })
