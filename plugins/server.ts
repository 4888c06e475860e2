import type { FastifyInstance } from 'fastify'
import type { AnyTool } from '../src/index.js'
import type { Config } from '../src/services/config.js'
import { buildApp } from './app.js'
import { StartError } from '../src/services/start-error.js'
import { coalesced, watchToolsDir, type ToolsWatch } from '../src/services/loading/tools-watch.js'
import { tracingFromEnv } from '../src/services/tracing/setup.js'
import type { Tracing } from '../src/services/tracing/types.js'

export interface StartOptions {
  readonly config: Config
  readonly tools: readonly AnyTool[]
  /** Stop on SIGTERM and SIGINT (default true): refuse new calls, let calls in flight finish, exit. */
  readonly handleSignals?: boolean
  /** Default: from the standard OpenTelemetry environment (`OTEL_EXPORTER_OTLP_ENDPOINT`, ...); off when it names no endpoint. */
  readonly tracing?: Tracing
  /**
   * The folder `tools` came from: `SIGHUP` reloads it (with `handleSignals`), and so does any
   * change in it with `watch`. Absent, the tools change only through `app.replaceTools`.
   */
  readonly toolsDir?: string
  /** Reload `toolsDir` when a file in it changes (default: `config.toolsWatch`, `TOOLS_WATCH`). */
  readonly watch?: boolean
}

/**
 * Build the gateway and listen on `config.host`:`config.port`, with the production logger and
 * graceful shutdown. What `toolgate serve` runs; `buildApp` is everything else.
 */
export async function startServer (options: StartOptions): Promise<FastifyInstance> {
  const { config, tools } = options
  const tracing = options.tracing ?? await tracingFromEnv(process.env)
  const app = await buildApp({
    config,
    tools,
    logger: { level: config.logLevel, redact: ['req.headers.authorization', 'req.headers["x-api-key"]'] },
    tracing,
    toolsDir: options.toolsDir,
  })
  // The process is the gateway's: OpenTelemetry's own warnings (a collector that fails, spans
  // dropped) go to its log. (An app embedded in a host's process leaves that to the host.)
  tracing?.logTo?.(app.log)
  // A refused reload is logged (and counted) where it is refused; here it only must not throw.
  // Never while shutting down: the catalog refuses it then anyway.
  const reload = coalesced(async () => { if (!app.catalog.closing) await app.reloadTools() })
  const { toolsDir } = options
  let watcher: ToolsWatch | undefined
  if (toolsDir !== undefined && (options.watch ?? config.toolsWatch)) {
    watcher = watchToolsDir(toolsDir, reload)
    app.addHook('onClose', async () => { watcher?.close() })
    app.log.info({ toolsDir }, 'watching the tools folder: a change reloads it')
  }
  if (options.handleSignals !== false) {
    let stopping = false
    const stop = (signal: string): void => {
      if (stopping) return
      stopping = true
      watcher?.close()
      app.log.info({ signal, graceMs: config.shutdownGraceMs }, 'shutting down: refusing new calls, letting calls in flight finish')
      void (async () => {
        await app.catalog.shutdown(config.shutdownGraceMs)
        await app.close()
        app.log.info('stopped')
        process.exit(0)
      })()
    }
    process.once('SIGTERM', () => { stop('SIGTERM') })
    process.once('SIGINT', () => { stop('SIGINT') })
    // SIGHUP reloads the tools folder and reads every OpenAPI document of the upstreams file again.
    if (toolsDir !== undefined || config.upstreamsFile !== undefined) {
      const onHangup = (): void => { if (!stopping) reload() }
      process.on('SIGHUP', onHangup)
      app.addHook('onClose', async () => { process.off('SIGHUP', onHangup) })
    }
  }
  let address: string
  try {
    address = await app.listen({ host: config.host, port: config.port })
  } catch (error) {
    // Nothing may outlive a start that failed: upstream children, Redis, watchers, the audit file.
    watcher?.close()
    await app.close().catch(() => undefined)
    throw new StartError(listenFailure(error, config.host, config.port), { cause: error })
  }
  app.log.info({ address, tools: app.catalog.ids(), docs: `${address}/docs` }, 'toolgate listening')
  return app
}

const LISTEN_CODES: Readonly<Record<string, string>> = {
  EADDRINUSE: 'the address is already in use',
  EACCES: 'permission denied (a port below 1024 needs privileges)',
  EADDRNOTAVAIL: 'the address is not one of this machine\'s',
  ENOTFOUND: 'the host name does not resolve',
}

function listenFailure (error: unknown, host: string, port: number): string {
  const code = (error as NodeJS.ErrnoException).code
  const why = code === undefined ? undefined : LISTEN_CODES[code]
  return `cannot listen on ${host}:${port}: ${why === undefined ? (error as Error).message : `${why} (${code})`}`
}
