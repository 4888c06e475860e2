/**
 * `toolgate/server`: the gateway. Build it (`buildApp`), start it (`startServer`), or mount it
 * in an existing Fastify app (`toolgate`), from the same declarations as `toolgate`.
 */
export { buildApp, type BuildOptions } from './app.js'
// Also brings the FastifyInstance augmentation (`app.catalog`) into the declarations.
export { registerGateway, type GatewayOptions } from './gateway.js'
export { startServer, type StartOptions } from './server.js'
export { toolgate, type ToolgatePluginOptions } from './mount.js'
export { openApiDocument } from './openapi/document.js'
export { loadConfig, parseConfig, ConfigError, ConfigSchema, type Config, type ConfigInput } from '../src/services/config.js'
export { loadToolsFromDir, loadToolModule, ToolLoadError } from '../src/services/loading/loader.js'
export { ToolReplacementError, type ToolReplacement } from '../src/services/loading/catalog-updates.js'
export { prepareToolsDir, registerToolHooks } from '../src/services/loading/tool-hooks.js'
export { hashApiKey } from '../src/services/auth/api-keys.js'
export { VERSION } from '../src/services/version.js'
export { createRedisClient } from '../src/services/redis/client.js'
export { tracingFromEnv } from '../src/services/tracing/setup.js'
export type { Tracing } from '../src/services/tracing/types.js'
