import type { FastifyInstance } from 'fastify'
import { admissionPlugin, type AdmissionOptions } from './admission.js'
import { intentRoutes, type IntentOptions } from './intents.js'
import { mcpRoutes, type McpOptions } from './mcp.js'
import { rateLimitingEnabled, rateLimitPlugin, type RateLimitOptions } from './rate-limit.js'

export interface AgentRoutesOptions {
  readonly admission: AdmissionOptions
  readonly rateLimit: RateLimitOptions
  readonly mcp: Omit<McpOptions, 'catalog' | 'facts'>
  readonly intents: IntentOptions
}

/**
 * The faces agents use beside the tool routes, in one scope with the same admission
 * (overload, authentication) and rate limits: MCP at `/mcp`, intents at `/intents`.
 */
export async function agentRoutes (app: FastifyInstance, options: AgentRoutesOptions): Promise<void> {
  await app.register(admissionPlugin, options.admission)
  if (rateLimitingEnabled(options.rateLimit.config)) await app.register(rateLimitPlugin, options.rateLimit)
  await app.register(mcpRoutes, { ...options.mcp, ...options.intents })
  await app.register(intentRoutes, options.intents)
}
