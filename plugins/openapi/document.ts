import type { AnyTool } from '../../src/index.js'
import type { Config } from '../../src/services/config.js'
import { buildApp } from '../app.js'

/**
 * The OpenAPI document of a gateway serving `tools` with `config`, as `GET /openapi.json` would
 * answer it, generated without listening.
 */
export async function openApiDocument (config: Config, tools: readonly AnyTool[]): Promise<Record<string, unknown>> {
  const app = await buildApp({ config, tools })
  try {
    await app.ready()
    return app.openapiDocument()
  } finally {
    await app.close()
  }
}
