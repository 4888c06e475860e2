/**
 * The server entry: configuration, tools, logging, listen, graceful shutdown. Everything
 * else is `buildApp`. Run with `npm start`.
 */
import { buildApp } from './app.js'
import { ConfigError, loadConfig } from '../src/services/config.js'
import { loadToolsFromDir, ToolLoadError } from '../src/services/loader.js'
import { ToolDefinitionError } from '../src/index.js'

async function main (): Promise<void> {
  const config = loadConfig()
  const tools = await loadToolsFromDir(config.toolsDir)
  const app = await buildApp({
    config,
    tools,
    logger: { level: config.logLevel, redact: ['req.headers.authorization', 'req.headers["x-api-key"]'] },
  })
  let stopping = false
  const stop = (signal: string): void => {
    if (stopping) return
    stopping = true
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
  const address = await app.listen({ host: config.host, port: config.port })
  app.log.info({ address, tools: app.catalog.ids(), docs: `${address}/docs` }, 'toolgate listening')
}

main().catch((error: unknown) => {
  // Start-up failures name the setting, the file or the field: print that, not a stack.
  const known = error instanceof ConfigError || error instanceof ToolLoadError || error instanceof ToolDefinitionError
  console.error(`toolgate: cannot start: ${known ? error.message : (error as Error).stack ?? String(error)}`)
  process.exit(1)
})
