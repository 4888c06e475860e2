import type { FastifyRequest } from 'fastify'

declare module 'fastify' {
  interface FastifyContextConfig {
    /**
     * Set on the routes that call any tool of the current catalog: `true` on `POST /tools/{id}`,
     * or how to find the tool's id (a bundle's `POST /bundles/{bundle}/tools/{name}`).
     */
    toolCall?: true | ((request: FastifyRequest) => string | undefined)
  }
}

/**
 * The tool a request to `POST /tools/{id}` (or a bundle's call route) names, as the caller spelled it: maybe no tool at
 * all, so whoever keeps state per tool (metrics, rate limits, audit) looks it up first.
 */
export function toolIdOf (request: FastifyRequest): string | undefined {
  const { toolCall } = request.routeOptions.config
  if (toolCall === undefined) return undefined
  if (toolCall !== true) return toolCall(request)
  return (request.params as { id?: string } | undefined)?.id
}
