import type { FastifyInstance } from 'fastify'
import type { ZodTypeProvider } from 'fastify-type-provider-zod'
import { z } from 'zod'
import { SCOPES } from '../../src/core/app-context.js'
import { GatewayError } from '../../src/index.js'
import { requireScope } from '../../src/services/auth/index.js'
import { AuditLineSchema, AuditVerdictSchema, type AuditView } from '../../src/services/console/audit-view.js'
import { ChartPointSchema, type MetricsHistory } from '../../src/services/console/metrics-history.js'
import { CallSummarySchema, type RecentCalls } from '../../src/services/console/recent-calls.js'
import type { Upstreams } from '../../src/services/upstreams/upstreams.js'
import { sendConditional } from '../http/conditional.js'
import { problemResponses } from '../http/problem-schemas.js'
import { refuseCrossSite } from '../http/same-origin.js'
import { SECURITY } from '../openapi/tool-operation.js'
import { UpstreamStatusSchema, upstreamViews } from '../tools/upstreams.js'

export interface ConsoleRoutesOptions {
  readonly recent: RecentCalls
  /** Absent with metrics off. */
  readonly history?: MetricsHistory
  readonly upstreams?: Upstreams
  /** Absent when the gateway keeps no audit file (none, or `AUDIT_LOG=stdout`). */
  readonly audit?: AuditView
}

/** Longest a read waits for the next call: under common proxies' idle timeouts. */
const MAX_WAIT_MS = 25_000
/** The audit lines one read answers at most. */
const MAX_AUDIT_LINES = 200

/**
 * What the operators' console reads, every route behind `gateway:read` and open to the pages'
 * sign-in cookie: the latest calls of this replica (long polling), the charts' points, the
 * upstreams, the audit trail's tail and its verification on demand. None answers an input or
 * an output, and none changes anything: the console reads.
 */
export async function consoleRoutes (parent: FastifyInstance, options: ConsoleRoutesOptions): Promise<void> {
  const app = parent.withTypeProvider<ZodTypeProvider>()
  const { recent, history } = options
  const config = { approvalsSession: true as const }
  app.addHook('onRequest', async request => { requireScope(request.principal, SCOPES.gatewayRead) })

  app.get('/console/calls', {
    config,
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
    const { after, max, waitMs } = request.query
    if (waitMs > 0) {
      // A reader that goes away stops waiting: nothing is kept for it.
      const gone = new AbortController()
      const onClose = (): void => { gone.abort() }
      reply.raw.once('close', onClose)
      await recent.waitAfter(after, waitMs, gone.signal)
      // Answered: the close that follows every response must not abort (an AbortError built per read).
      reply.raw.off('close', onClose)
    }
    const calls = recent.after(after, max)
    return { calls, next: calls.length === 0 ? Math.max(after, recent.next - 1) : calls[calls.length - 1]!.seq }
  })

  app.get('/console/series', {
    config,
    schema: {
      operationId: 'listChartPoints', tags: ['gateway'], summary: 'The last minutes of this replica\'s metrics, interval by interval',
      description: 'What the console\'s charts draw, read off the gateway\'s own metrics every few seconds over the last minutes: calls by outcome and by effect, failures, queue waits, the busiest tools\' latency. Answers 304 to `If-None-Match` until the next interval; 404 with metrics off. Needs the scope `gateway:read`.',
      security: SECURITY,
      response: { 200: z.object({ intervalMs: z.number().int(), points: z.array(ChartPointSchema) }), 304: z.null(), ...problemResponses([401, 403, 404]) },
    },
  }, async (request, reply) => {
    if (history === undefined) throw new GatewayError('TOOLGATE_NOT_FOUND', 'metrics are off on this gateway (METRICS=false): there is nothing to chart')
    return await sendConditional(request, reply, JSON.stringify({ intervalMs: history.options.intervalMs, points: history.points() }))
  })

  app.get('/console/upstreams', {
    config,
    schema: {
      operationId: 'listConsoleUpstreams', tags: ['gateway'], summary: 'The state of every upstream, for the console',
      description: 'As `GET /upstreams`, behind `gateway:read`; 304 to `If-None-Match` while nothing changed.',
      security: SECURITY,
      response: { 200: z.object({ upstreams: z.array(UpstreamStatusSchema) }), 304: z.null(), ...problemResponses([401, 403]) },
    },
  }, async (request, reply) => await sendConditional(request, reply, JSON.stringify({ upstreams: options.upstreams === undefined ? [] : upstreamViews(options.upstreams) })))

  const auditOf = (): AuditView => {
    if (options.audit === undefined) throw new GatewayError('TOOLGATE_NOT_FOUND', 'this gateway keeps no audit file (AUDIT_LOG is unset or stdout)')
    return options.audit
  }
  app.get('/console/audit', {
    config,
    schema: {
      operationId: 'tailAudit', tags: ['gateway'], summary: 'The audit trail\'s last lines',
      description: `The last records of the audit file (from its last half megabyte), newest last, each as written less its \`input\`; with \`callId\`, that call's. Needs the scope \`gateway:read\`; 404 when the gateway keeps no audit file.`,
      security: SECURITY,
      querystring: z.object({
        max: z.coerce.number().int().min(1).max(MAX_AUDIT_LINES).default(50),
        callId: z.string().min(1).max(128).optional().describe('Only the line of this call'),
      }),
      response: { 200: z.object({ file: z.string(), truncated: z.boolean().describe('The file holds older lines than those read'), lines: z.array(AuditLineSchema) }), ...problemResponses([400, 401, 403, 404]) },
    },
  }, async request => {
    const audit = auditOf()
    const { lines, truncated } = await audit.tail(request.query.max, request.query.callId)
    return { file: audit.source.path, truncated, lines }
  })

  app.post('/console/audit/verify', {
    config,
    schema: {
      operationId: 'verifyAudit', tags: ['gateway'], summary: 'Verify the audit trail\'s chain now',
      description: 'Writes out what the trail holds, then checks every line of the file and that its chain ends where this process\'s does: a line changed, removed, inserted or cut from the end is named (as `toolgate audit verify`). One runs at a time; a request during one shares its verdict. Needs the scope `gateway:read`.',
      security: SECURITY,
      response: { 200: AuditVerdictSchema, ...problemResponses([401, 403, 404]) },
    },
  }, async request => {
    refuseCrossSite(request)
    return await auditOf().verify()
  })
}
