import Fastify, { LogController, type FastifyBaseLogger, type FastifyInstance } from 'fastify'
import { pino, type DestinationStream, type LoggerOptions } from 'pino'
import type { AnyTool } from '../src/index.js'
import type { Config } from '../src/services/config.js'
import { clientErrorHandler } from './http/client-errors.js'
import { closeUnusedConnections } from './http/unused-connections.js'
import { registerGateway } from './gateway.js'
import { frameworkError } from './http/problem.js'
import { requestLoggers } from './http/lazy-logger.js'
import { logsOf } from '../src/services/calls/gateway-calls.js'
import { requestIdOf } from './http/request-id.js'
import { redactUrl } from '../src/services/auth/query-credentials.js'
import type { Tracing } from '../src/services/tracing/types.js'
import { traceIdsOfActiveSpan } from '../src/services/tracing/span-ids.js'
import type { Upstreams } from '../src/services/upstreams/upstreams.js'


export interface BuildOptions {
  readonly config: Config
  readonly tools: readonly AnyTool[]
  /** pino settings for the gateway's logger (and where to write, stdout by default); `false` (tests, mostly) logs nothing. */
  readonly logger?: (LoggerOptions & { readonly stream?: DestinationStream }) | false
  /** OpenTelemetry tracing (`tracingFromEnv`): spans, and trace ids on every log line. */
  readonly tracing?: Tracing
  /** The folder `tools` came from, which `app.reloadTools()` loads again. */
  readonly toolsDir?: string
}

/** The gateway's upstream MCP servers (`UPSTREAMS_FILE`), started; undefined when none are configured. */
async function upstreamsOf (config: Config, log: FastifyBaseLogger): Promise<Upstreams | undefined> {
  if (config.upstreamsFile === undefined) return undefined
  // The MCP client and CEL load only for a gateway that has upstreams.
  const { startUpstreams, upstreamsOptionsOf } = await import('../src/services/upstreams/upstreams.js')
  return await startUpstreams(config.upstreamsFile, upstreamsOptionsOf(config, log))
}

/**
 * Assemble the gateway as its own Fastify app. Never listens: the server entry, the tests,
 * the OpenAPI generator and the benchmark all build the same app.
 */
export async function buildApp (options: BuildOptions): Promise<FastifyInstance> {
  const { config } = options
  const logger = gatewayLogger(options.logger, options.tracing?.activeSpan === true)
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
    // Fastify's own option, so that request.ip, request.protocol and request.host (the throttle,
    // the logs, the audit trail, the advertised URLs) all read the forwarded headers the same way.
    trustProxy: fastifyTrustProxy(config.trustProxy),
    // A client that stalls its headers or body is answered 408 and disconnected (Fastify turns
    // Node's request timeout off by default). Node checks open requests every
    // `connectionsCheckingInterval`, so that is kept well under the shortest timeout.
    requestTimeout: config.requestTimeoutMs,
    http: { headersTimeout: Math.min(config.headersTimeoutMs, config.requestTimeoutMs), connectionsCheckingInterval: checkingInterval(config) },
    clientErrorHandler,
    frameworkErrors: frameworkError,
    genReqId: requestIdOf,
    requestIdHeader: false,
    return503OnClosing: false,
    onProtoPoisoning: 'error',
    onConstructorPoisoning: 'error',
    routerOptions: { ignoreTrailingSlash: false, maxParamLength: 128 },
  })
  // A plain property of the root instance, read through by every plugin scope made later.
  app.log = logger
  closeUnusedConnections(app)
  const upstreams = await upstreamsOf(config, logger)
  if (upstreams !== undefined) app.addHook('onClose', async () => { await upstreams.close() })
  try {
    await registerGateway(app, { config, tools: options.tools, tracing: options.tracing, toolsDir: options.toolsDir, upstreams })
  } catch (error) {
    // Every hook added so far closes what it opened: upstream children, Redis, the audit file.
    await app.close().catch(() => undefined)
    throw error
  }
  // Tool calls log their own line (tool-routes); every other request logs here, when info
  // lines are kept at all: a response hook costs every call, so none is added otherwise.
  if (logsOf(config.logLevel).info) {
    app.addHook('onResponse', (request, reply, done) => {
      if (request.callRecord === null) {
        request.log.info({ method: request.method, url: redactUrl(request.url), source: request.ip, status: reply.statusCode, durationMs: Math.round(reply.elapsedTime * 100) / 100 }, 'request')
      }
      done()
    })
  }
  return app
}

/**
 * `TRUST_PROXY` as Fastify takes it. A hop count becomes "the last N peers are proxies" (Fastify
 * itself now refuses to believe anything for a bare number); it trusts the peer whatever its
 * address, so it fits only where nothing but the proxy can reach the gateway.
 */
function fastifyTrustProxy (setting: Config['trustProxy']): false | string[] | ((address: string, hop: number) => boolean) {
  if (typeof setting !== 'number') return setting
  return (_address, hop) => hop < setting
}

function checkingInterval (config: Config): number {
  return Math.max(50, Math.min(1_000, Math.floor(Math.min(config.headersTimeoutMs, config.requestTimeoutMs) / 4)))
}

function gatewayLogger (options: BuildOptions['logger'], activeSpan: boolean): FastifyBaseLogger {
  if (options === undefined || options === false) return pino({ enabled: false })
  const { stream, ...given } = options
  // With the call's span active (TRACE_ACTIVE_SPAN), every line written inside a call carries
  // its ids; without, the call's own line names them (tool-call.ts).
  const settings = activeSpan ? { ...given, mixin: traceIdsOfActiveSpan } : given
  return stream === undefined ? pino(settings) : pino(settings, stream)
}
