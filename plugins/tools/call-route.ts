import type { FastifyRequest } from 'fastify'

declare module 'fastify' {
  interface FastifyContextConfig {
    /** Set on `POST /tools/{id}`, the one route that calls any tool of the current catalog. */
    toolCall?: true
  }
}

/**
 * The tool a request to `POST /tools/{id}` names, as the caller spelled it: maybe no tool at
 * all, so whoever keeps state per tool (metrics, rate limits, audit) looks it up first.
 */
export function toolIdOf (request: FastifyRequest): string | undefined {
  if (request.routeOptions.config.toolCall !== true) return undefined
  return (request.params as { id?: string } | undefined)?.id
}
