import type { FastifyInstance } from 'fastify'
import { SCOPES, type GatewayApp, type Principal } from '../../src/core/app-context.js'
import { viewOf, type ApprovalRecord, type ToolCatalog } from '../../src/index.js'
import type { RecentDecisions } from '../../src/services/approvals/recent-decisions.js'
import { sendConditional } from '../http/conditional.js'
import { pageNonce, sendPage } from '../http/page-security.js'
import { approvalsPage, readPageAssets } from './page-html.js'

export interface ApprovalPageOptions {
  readonly catalog: ToolCatalog<GatewayApp>
  readonly recent: RecentDecisions
  /** The pending approvals this principal may see. */
  readonly visible: (principal: Principal) => Promise<ApprovalRecord[]>
  /** Why this principal may not decide this approval; undefined when they may. */
  readonly whyNot: (principal: Principal, record: ApprovalRecord) => string | undefined
  readonly pollMs: number
  readonly oidcSignIn: boolean
}

/**
 * `GET /approvals/ui`, the page, open to anyone: it holds no data, only the script that asks
 * for it. `GET /approvals/ui/feed`, what the page shows, authenticated like every approvals
 * route, answered with an ETag so the page's poll every few seconds is a 304 with no body
 * while nothing changed. The feed reads the approval store each time, so with Redis a
 * request or decision on any replica shows on every replica's page.
 */
export async function approvalPageRoutes (app: FastifyInstance, options: ApprovalPageOptions): Promise<void> {
  const assets = readPageAssets()
  app.get('/approvals/ui', { schema: { hide: true }, config: { anonymous: 'always' } }, async (_request, reply) => {
    const nonce = pageNonce()
    return await sendPage(reply, nonce, approvalsPage({ assets, nonce, pollMs: options.pollMs, oidc: options.oidcSignIn }))
  })

  app.get('/approvals/ui/feed', { schema: { hide: true }, config: { approvalsSession: true } }, async (request, reply) => {
    const { principal } = request
    return await sendConditional(request, reply, JSON.stringify(await feedOf(options, principal, request.approvalsSession === true)))
  })
}

async function feedOf (options: ApprovalPageOptions, principal: Principal, session: boolean): Promise<object> {
  const mayDecide = principal.scopes.includes(SCOPES.approve)
  const pending = (await options.visible(principal)).map(record => {
    const tool = options.catalog.get(record.tool)
    const cannotDecide = options.whyNot(principal, record)
    return { ...viewOf(record), description: tool?.description ?? '', ...(cannotDecide === undefined ? {} : { cannotDecide }) }
  })
  const recent = (await options.recent.list().catch(() => []))
    .filter(decision => mayDecide || decision.requestedBy === principal.id)
    .slice(0, 20)
    .map(decision => ({ ...decision, at: new Date(decision.at).toISOString() }))
  return { viewer: { id: principal.id, mayDecide, session }, pending, recent }
}
