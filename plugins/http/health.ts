import type { FastifyInstance } from 'fastify'
import { z } from 'zod'

const Health = z.object({ status: z.enum(['ok', 'unavailable']) })

/**
 * `/healthz`: the process answers. `/readyz`: tools loaded, not shutting down, and every
 * upstream the upstreams file marks `required` connected (others never hold readiness back).
 */
export async function healthRoutes (app: FastifyInstance, options: { catalog: { readonly closing: boolean }, upstreams?: { ready (): boolean } }): Promise<void> {
  const schema = (summary: string) => ({ tags: ['gateway'], summary, security: [], response: { 200: Health, 503: Health } })
  app.get('/healthz', { schema: { ...schema('Liveness: the process is alive'), operationId: 'healthz' } }, async () => ({ status: 'ok' as const }))
  app.get('/readyz', { schema: { ...schema('Readiness: tools are loaded and the gateway is not shutting down'), operationId: 'readyz' } }, async (_request, reply) => {
    if (options.catalog.closing || options.upstreams?.ready() === false) return reply.code(503).header('Retry-After', '5').send({ status: 'unavailable' as const })
    return { status: 'ok' as const }
  })
}
