import type { FastifyInstance } from 'fastify'
import type { ZodTypeProvider } from 'fastify-type-provider-zod'
import { z } from 'zod'
import { SCOPES } from '../../src/core/app-context.js'
import { requireScope } from '../../src/services/auth/index.js'
import { CallSummarySchema, type RecentCalls } from '../../src/services/console/recent-calls.js'
import { problemResponses } from '../http/problem-schemas.js'
import { SECURITY } from '../openapi/tool-operation.js'

export interface ConsoleRoutesOptions {
  readonly recent: RecentCalls
}

/** Longest a read waits for the next call: under common proxies' idle timeouts. */
const MAX_WAIT_MS = 25_000


/**
 * What the operators' console reads of the calls: `GET /console/calls`, the latest finished
 * calls of this replica (never an input or an output), after a sequence number, waiting for the
 * next one when asked (long polling). Needs `gateway:read`.
 */
export async function consoleRoutes (parent: FastifyInstance, options: ConsoleRoutesOptions): Promise<void> {
  const app = parent.withTypeProvider<ZodTypeProvider>()
  const { recent } = options
  app.get('/console/calls', {
    schema: {
      operationId: 'listRecentCalls', tags: ['gateway'], summary: 'The latest calls this replica finished',
      description: `The latest finished calls of this replica (up to ${recent.capacity} are kept), oldest first, after \`after\`: what ran, for whom, how it ended, never its input or output. With \`waitMs\`, waits up to that long (at most ${MAX_WAIT_MS / 1000} s) for a call when there is none yet. Needs the scope \`gateway:read\`.`,
      security: SECURITY,
      querystring: z.object({
        after: z.coerce.number().int().min(0).default(0).describe('The `next` of the previous read (0: the latest held)'),
        max: z.coerce.number().int().min(1).max(recent.capacity).default(100).describe('At most this many calls (the newest of them)'),
        waitMs: z.coerce.number().int().min(0).max(MAX_WAIT_MS).default(0).describe('Wait this long for a call when none is past `after`'),
      }),
      response: {
        200: z.object({ calls: z.array(CallSummarySchema), next: z.number().int().describe('`after` for the next read') }),
        ...problemResponses([400, 401, 403]),
      },
    },
  }, async (request, reply) => {
    requireScope(request.principal, SCOPES.gatewayRead)
    const { after, max, waitMs } = request.query
    if (waitMs > 0) {
      // A reader that goes away stops waiting: nothing is kept for it.
      const gone = new AbortController()
      reply.raw.once('close', () => { gone.abort() })
      await recent.waitAfter(after, waitMs, gone.signal)
    }
    const calls = recent.after(after, max)
    return { calls, next: calls.length === 0 ? Math.max(after, recent.next - 1) : calls[calls.length - 1]!.seq }
  })
}
