import type { FastifyInstance } from 'fastify'
import { defineTool, isDefinedTool, type AnyTool, type ToolDeclaration } from '../src/index.js'
import { ConfigError, parseConfig, type ConfigInput } from '../src/services/config.js'
import { registerGateway } from './gateway.js'
import type { Tracing } from '../src/services/tracing/types.js'

export interface ToolgatePluginOptions {
  /** The tools to serve: `defineTool` results or plain declarations. */
  // eslint-disable-next-line @typescript-eslint/no-explicit-any -- declarations of any schema shape
  readonly tools: ReadonlyArray<AnyTool | ToolDeclaration<any, any, any>>
  /**
   * The gateway's settings, as in a `CONFIG_FILE` (`apiKeys`, `jwt`, `rules`, `toolTimeoutMs`,
   * `metrics`, `docs`, `redisUrl`, ...). The environment is not read: the host app decides.
   */
  readonly config?: ConfigInput
  /** Trace the gateway's requests and calls (`tracingFromEnv(process.env)`); absent, nothing is traced. */
  readonly tracing?: Tracing
  /**
   * Handed the gateway's own (encapsulated) instance once it is registered: keep it to replace
   * the tools while serving (`gateway.replaceTools(tools)`), read `gateway.catalog` or
   * `gateway.openapiDocument()`.
   */
  readonly onGateway?: (gateway: FastifyInstance) => void
}

/**
 * The gateway as a Fastify plugin, for an existing app: every route, error, OpenAPI operation
 * and metric of the standalone gateway, under the prefix you register it with.
 *
 * @example
 * import Fastify, { type FastifyInstance } from 'fastify'
 * import { toolgate } from 'toolgate/server'
 * import tools from './my-tools.js'
 * const app = Fastify()
 * let gateway: FastifyInstance | undefined
 * await app.register(toolgate, { tools, prefix: '/agent-tools', config: { apiKeys: [] , authDisabled: true }, onGateway: g => { gateway = g } })
 * // later, while serving: resolves with what changed, or rejects and the old tools stay
 * await gateway!.replaceTools([...tools])
 */
export async function toolgate (app: FastifyInstance, options: ToolgatePluginOptions): Promise<void> {
  const config = parseConfig(options.config ?? {})
  // The host decides where it listens, so loopback cannot be the safety net: say who may call.
  if (config.apiKeys.length === 0 && config.jwt === undefined && !config.authDisabled) {
    throw new ConfigError('invalid setting "apiKeys": a mounted toolgate needs apiKeys or jwt, or authDisabled: true to serve anonymous callers')
  }
  const tools = options.tools.map(tool => (isDefinedTool(tool) ? tool : defineTool(tool as ToolDeclaration)))
  await registerGateway(app, { config, tools, tracing: options.tracing })
  options.onGateway?.(app)
}
