/**
 * toolgate as production builds it: metrics and docs on, an API key configured (the load
 * generator sends it), log level warn. Shared by the toolgate target and the start-up probe.
 */
import type { FastifyInstance } from 'fastify'
import { buildApp } from '../../plugins/app.js'
import { hashApiKey } from '../../src/services/auth/api-keys.js'
import { loadConfig, type ConfigInput } from '../../src/services/config.js'
import type { AnyTool } from '../../src/index.js'
import { BENCH_API_KEY } from './echo.js'
import { benchTools } from './toolgate-tools.js'

/** The gateway serving `toolCount` tools, `echo` first. Never listens. */
export async function buildBenchGateway (toolCount: number, overrides: ConfigInput = {}, tools: AnyTool[] = benchTools(toolCount)): Promise<FastifyInstance> {
  const config = loadConfig({}, {
    logLevel: 'warn',
    apiKeys: [{ principal: 'bench', sha256: hashApiKey(BENCH_API_KEY), scopes: ['tools:read', 'tools:call'] }],
    ...overrides,
  })
  return await buildApp({ config, tools, logger: { level: config.logLevel } })
}
