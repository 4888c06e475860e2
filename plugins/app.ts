import { readFileSync } from 'node:fs'
import Fastify, { LogController, type FastifyBaseLogger, type FastifyInstance } from 'fastify'
import { pino, type DestinationStream, type LoggerOptions } from 'pino'
import { serializerCompiler, validatorCompiler } from 'fastify-type-provider-zod'
import type { GatewayApp, GatewayFacts } from '../src/core/app-context.js'
import { ConfigError, type Config } from '../src/services/config.js'
import { RedisIdempotencyStore } from '../src/services/redis/idempotency-store.js'
import { createRedisClient, whenReady } from '../src/services/redis/client.js'
import { defineToolCatalog, MemoryIdempotencyStore, type AnyTool, type ToolCatalog } from '../src/index.js'
import { GatewayMetrics } from '../src/services/metrics/gateway-metrics.js'
import { healthRoutes } from './health.js'
import { logsInfo, requestLoggers } from './lazy-logger.js'
import { countEarlyFailure, metricsPlugin } from './metrics.js'
import { openApiPlugin } from './openapi.js'
import { problemPlugin } from './problem.js'
import { requestIdOf, requestIdPlugin } from './request-id.js'
import { toolRoutes } from './tool-routes.js'

declare module 'fastify' {
  interface FastifyInstance {
    catalog: ToolCatalog<GatewayApp>
    gatewayMetrics: GatewayMetrics
  }
}

export const VERSION: string = (JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8')) as { version: string }).version

export interface BuildOptions {
  readonly config: Config
  readonly tools: readonly AnyTool[]
  /** pino settings for the gateway's logger (and where to write, stdout by default); `false` (tests, mostly) logs nothing. */
  readonly logger?: (LoggerOptions & { readonly stream?: DestinationStream }) | false
}

/**
 * Assemble the gateway. Never listens: the server entry, the tests, the OpenAPI generator and
 * the benchmark all build the same app. Plugins are registered in a visible order.
 */
export async function buildApp (options: BuildOptions): Promise<FastifyInstance> {
  const { config } = options
  checkToolLimits(config, options.tools)
  const logger = gatewayLogger(options.logger)
  const app = Fastify({
    // Fastify gets no logger of its own: with one, it times every response for a request log
    // line that toolgate replaces with its own (one line per call, with the tool and outcome),
    // which cost about 5% of a call. Request loggers are the gateway's (`requestLoggers`), and
    // so is `app.log` (set below).
    logger: false,
    childLoggerFactory: requestLoggers(logger),
    // Nor does it log requests: toolgate logs one line per request (onResponse below, and per
    // tool call), with the tool and its outcome.
    logController: new LogController({ disableRequestLogging: true }),
    bodyLimit: config.bodyLimit,
    genReqId: requestIdOf,
    requestIdHeader: false,
    return503OnClosing: false,
    onProtoPoisoning: 'error',
    onConstructorPoisoning: 'error',
    routerOptions: { ignoreTrailingSlash: false, maxParamLength: 128 },
  })
  // A plain property of the root instance, read through by every plugin scope made later.
  app.log = logger
  const redis = config.redisUrl === undefined ? undefined : createRedisClient(config.redisUrl, {
    down: error => { app.log.warn({ err: error }, 'redis unreachable: idempotent calls answer 503, rate limits are not enforced until it is back') },
    up: () => { app.log.info('redis reachable again') },
  })
  if (redis !== undefined && !await whenReady(redis, 2_000)) app.log.warn('redis not reachable at start-up; continuing')
  // `catalog` is read at scrape time only, once it exists.
  const metrics = new GatewayMetrics(options.tools, { version: VERSION, queued: () => catalog.scheduler.queued })
  const catalog = defineToolCatalog<GatewayApp>(options.tools as AnyTool<GatewayApp>[], {
    core: {
      defaultTimeoutMs: config.toolTimeoutMs,
      maxQueuePerDomain: config.maxQueuePerSession,
      queueTimeoutMs: config.queueTimeoutMs,
      toolLimits: Object.fromEntries(Object.entries(config.toolLimits).flatMap(([id, limit]) =>
        limit.maxInFlight === undefined ? [] : [[id, { maxInFlight: limit.maxInFlight, maxQueue: limit.maxQueue }]])),
    },
    idempotency: {
      store: redis === undefined ? new MemoryIdempotencyStore({ maxEntries: config.idempotencyMaxEntries }) : new RedisIdempotencyStore(redis, config.redisPrefix),
      ttlMs: config.idempotencyTtlMs,
    },
    onRecord: config.metrics ? record => { metrics.observe(record) } : undefined,
  })
  const facts: GatewayFacts = {
    version: VERSION,
    startedAt: Date.now(),
    toolIds: () => catalog.ids(),
    inFlight: () => catalog.inFlight,
  }

  app.setValidatorCompiler(validatorCompiler)
  app.setSerializerCompiler(serializerCompiler)
  app.decorate('catalog', catalog)
  app.decorate('gatewayMetrics', metrics)
  app.decorateRequest('callRecord', null)

  await app.register(problemPlugin, { onToolRouteFailure: config.metrics ? countEarlyFailure(metrics) : undefined })
  await app.register(requestIdPlugin)
  await app.register(openApiPlugin, { version: VERSION, ui: config.docs })
  if (config.metrics) await app.register(metricsPlugin, { metrics })
  await app.register(healthRoutes, { catalog: catalog as ToolCatalog<never> })
  await app.register(toolRoutes, {
    catalog,
    facts,
    admission: { config, onAuthFailure: config.metrics ? reason => { metrics.authFailure(reason) } : undefined },
    inFlight: config.metrics ? toolId => metrics.inFlight(toolId) : undefined,
    rateLimit: { config, redis },
    maxResponseBytes: config.maxResponseBytes,
  })
  // Tool calls log their own line (tool-routes); every other request logs here, when info
  // lines are kept at all: a response hook costs every call, so none is added otherwise.
  if (logsInfo(config.logLevel)) {
    app.addHook('onResponse', (request, reply, done) => {
      if (request.callRecord === null) {
        request.log.info({ method: request.method, url: request.url, status: reply.statusCode, durationMs: Math.round(reply.elapsedTime * 100) / 100 }, 'request')
      }
      done()
    })
  }
  app.addHook('onClose', async () => {
    await catalog.shutdown(0)
    redis?.disconnect()
  })
  return app
}

function gatewayLogger (options: BuildOptions['logger']): FastifyBaseLogger {
  if (options === undefined || options === false) return pino({ enabled: false })
  const { stream, ...settings } = options
  return stream === undefined ? pino(settings) : pino(settings, stream)
}

/** A limit for a tool that does not exist is a typo: stop start-up and name it. */
function checkToolLimits (config: Config, tools: readonly AnyTool[]): void {
  const ids = new Set(tools.map(tool => tool.id))
  for (const id of Object.keys(config.toolLimits)) {
    if (!ids.has(id)) throw new ConfigError(`invalid setting "toolLimits.${id}": there is no tool "${id}"`)
  }
}
