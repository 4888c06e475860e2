import type { FastifyInstance } from 'fastify'
import type { ZodTypeProvider } from 'fastify-type-provider-zod'
import { z } from 'zod'
import { SCOPES, type GatewayApp, type Principal } from '../../src/core/app-context.js'
import { notFound } from '../../src/core/approvals/approvals.js'
import { MemoryApprovalStore, viewOf, type ApprovalRecord, type ToolCatalog } from '../../src/index.js'
import { requireScope } from '../../src/services/auth/index.js'
import { ApprovalSchema, DecisionBody } from './schemas.js'
import { approvalPageRoutes } from './page.js'
import { refuseCrossSite } from '../http/same-origin.js'
import { approvalsSignInRoutes } from './sign-in.js'
import type { OidcSignIn } from '../../src/services/approvals/sign-in/oidc-sign-in.js'
import type { RecentDecisions } from '../../src/services/approvals/recent-decisions.js'
import { problemResponses } from '../http/problem-schemas.js'

export interface ApprovalRoutesOptions {
  readonly catalog: ToolCatalog<GatewayApp>
  /** How often expired approvals are swept (counted, logged) and the pending gauge refreshed; 0: never. */
  readonly sweepMs: number
  readonly onPending?: (count: number) => void
  /** The page's "recent decisions". */
  readonly recent: RecentDecisions
  /** How often the open page asks whether anything changed. */
  readonly pagePollMs: number
  /** The page's OpenID Connect sign-in (its routes are served when set). */
  readonly signIn?: OidcSignIn
}

const SECURITY: Array<Record<string, string[]>> = [{ apiKey: [] }, { bearer: [] }]
const Params = z.object({ id: z.string().max(128) })

/**
 * `GET /approvals`, `GET /approvals/{id}`, `POST /approvals/{id}/approve|reject` and the page
 * `GET /approvals/ui`, inside the gateway's authenticated scope, behind the same admission
 * (overload, authentication) and rate limits as the tool routes. Deciding needs `tools:approve`; the core refuses self-approval and
 * approvers a rule does not name.
 */
export async function approvalRoutes (parent: FastifyInstance, options: ApprovalRoutesOptions): Promise<void> {
  const app = parent.withTypeProvider<ZodTypeProvider>()
  const approvals = options.catalog.approvals
  // Decisions take JSON only: a cross-site form (urlencoded, multipart, text/plain) gets 415.
  app.removeContentTypeParser(['text/plain'])

  const refresh = async (): Promise<void> => {
    await approvals.sweep()
    options.onPending?.(await approvals.store.pendingCount())
  }
  if (options.sweepMs > 0) {
    const timer = setInterval(() => { refresh().catch(() => {}) }, options.sweepMs)
    timer.unref()
    app.addHook('onClose', async () => { clearInterval(timer) })
  }

  if (approvals.store instanceof MemoryApprovalStore) {
    const store = approvals.store
    app.addHook('onClose', async () => {
      const lost = await store.pendingCount()
      if (lost > 0) app.log.warn({ pendingApprovals: lost }, 'shutting down: pending approvals live in this process only and are lost (set REDIS_URL to keep them)')
    })
  }

  const visible = async (principal: Principal): Promise<ApprovalRecord[]> =>
    (await approvals.listPending()).filter(record => maySee(principal, record))

  // The page's sign-in cookie may authenticate these (see approvals-sign-in.ts); tool calls never.
  const session = { approvalsSession: true as const }

  app.get('/approvals', {
    config: session,
    schema: {
      operationId: 'listApprovals', tags: ['approvals'], summary: 'Pending approvals you may see',
      description: 'With `tools:approve`: every pending approval. Otherwise: your own pending requests.',
      security: SECURITY, response: { 200: z.object({ approvals: z.array(ApprovalSchema) }), ...problemResponses([401, 503]) },
    },
  }, async request => ({ approvals: (await visible(request.principal)).map(viewOf) }))

  await app.register(approvalPageRoutes, { catalog: options.catalog, recent: options.recent, visible, whyNot, pollMs: options.pagePollMs, oidcSignIn: options.signIn !== undefined })
  if (options.signIn !== undefined) await app.register(approvalsSignInRoutes, { signIn: options.signIn })

  app.get('/approvals/:id', {
    config: session,
    schema: {
      operationId: 'getApproval', tags: ['approvals'], summary: 'Read one approval', security: SECURITY,
      description: 'Its requester and approvers may read it, whatever its status.',
      params: Params, response: { 200: ApprovalSchema, ...problemResponses([401, 404, 503]) },
    },
  }, async request => {
    const record = await approvals.get(request.params.id)
    if (record === undefined || !maySee(request.principal, record)) throw notFound(request.params.id)
    return viewOf(record)
  })

  for (const [action, status] of [['approve', 'approved'], ['reject', 'rejected']] as const) {
    app.post(`/approvals/:id/${action}`, {
      config: session,
      schema: {
        operationId: `${action}Approval`, tags: ['approvals'], summary: `${action === 'approve' ? 'Approve' : 'Reject'} a pending approval`,
        description: `Needs \`tools:approve\`; nobody decides their own request. ${action === 'approve' ? 'The requester then re-sends the call with `Approval-Id`; it runs once.' : 'The requester\'s retry answers 403 with your note.'}`,
        security: SECURITY, params: Params, body: DecisionBody.nullish(),
        response: { 200: ApprovalSchema, ...problemResponses([400, 401, 403, 404, 409, 410, 413, 415, 503]) },
      },
    }, async request => {
      refuseCrossSite(request)
      requireScope(request.principal, SCOPES.approve)
      const view = await approvals.decide(request.params.id, request.principal, status, request.body?.note)
      options.onPending?.(await approvals.store.pendingCount().catch(() => 0))
      return view
    })
  }

  function maySee (principal: Principal, record: ApprovalRecord): boolean {
    return record.requestedBy === principal.id || principal.scopes.includes(SCOPES.approve)
  }

  function whyNot (principal: Principal, record: ApprovalRecord): string | undefined {
    if (!principal.scopes.includes(SCOPES.approve)) return 'you need the tools:approve scope to decide'
    return approvals.refusal(record, principal)?.message
  }
}
