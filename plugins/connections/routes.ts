import { readFileSync } from 'node:fs'
import type { FastifyInstance, FastifyRequest } from 'fastify'
import type { ZodTypeProvider } from 'fastify-type-provider-zod'
import { z } from 'zod'
import { SCOPES } from '../../src/core/app-context.js'
import { GatewayError } from '../../src/index.js'
import { requireScope } from '../../src/services/auth/index.js'
import type { LinkCredential } from '../../src/services/upstreams/credentials/link-credential.js'
import { pageNonce, sendPage } from '../http/page-security.js'
import { refuseCrossSite } from '../http/same-origin.js'
import { cookie, cookieName, originOf, readCookie } from '../http/cookies.js'
import { connectionsPage } from './page.js'

/*
 * `GET /connections/ui` (the page, open: it holds no data), `GET /connections` (what the signed-in
 * person has linked), `POST /connections/{upstream}/link` (where their browser goes next),
 * `GET /connections/callback` (where it comes back) and `POST /connections/{upstream}/unlink`.
 * A link is bound to the browser that began it: the flow's id rides in an HttpOnly cookie and
 * must come back with the authorization server's `state`, so nobody can hand a person a link
 * to finish for the wrong account.
 */

const FLOW_COOKIE = 'toolgate-link-flow'
const Upstream = z.object({ upstream: z.string().min(1).max(64) })

export async function connectionRoutes (parent: FastifyInstance, options: { readonly links: readonly LinkCredential[], readonly oidcSignIn: boolean }): Promise<void> {
  const app = parent.withTypeProvider<ZodTypeProvider>()
  const links = new Map(options.links.map(link => [link.upstream, link]))
  const assets = { script: readAsset('connections.js'), style: readAsset('connections.css') }
  const linkOf = (upstream: string): LinkCredential => {
    const link = links.get(upstream)
    if (link === undefined) throw new GatewayError('TOOLGATE_NOT_FOUND', `no upstream "${upstream}" is reached with a linked account`)
    return link
  }
  const callbackOf = (request: FastifyRequest): string => `${originOf(request)}${parent.prefix}/connections/callback`
  const page = `${parent.prefix}/connections/ui`

  app.get('/connections/ui', { schema: { hide: true }, config: { anonymous: 'always' } }, async (_request, reply) => {
    const nonce = pageNonce()
    return await sendPage(reply, nonce, connectionsPage(assets, nonce, options.oidcSignIn))
  })

  app.get('/connections', { schema: { hide: true }, config: { approvalsSession: true } }, async request => {
    requireScope(request.principal, SCOPES.call)
    const connections = await Promise.all([...links.values()].map(async link => {
      const status = await link.status(request.principal)
      return { upstream: link.upstream, state: status.state, ...(status.linkedAt === undefined ? {} : { linkedAt: new Date(status.linkedAt).toISOString() }), ...(status.why === undefined ? {} : { why: status.why }) }
    }))
    return { viewer: { id: request.principal.id }, connections }
  })

  app.post('/connections/:upstream/link', { schema: { hide: true, params: Upstream }, config: { approvalsSession: true } }, async (request, reply) => {
    refuseCrossSite(request)
    requireScope(request.principal, SCOPES.call)
    const { url, flowId } = await linkOf(request.params.upstream).begin(request.principal, callbackOf(request))
    // Lax: the authorization server's redirect back is a cross-site navigation, which must carry it.
    return await reply.header('set-cookie', flowCookie(request, flowId, 600)).header('cache-control', 'no-store').send({ url })
  })

  app.get('/connections/callback', { schema: { hide: true }, config: { anonymous: 'always' } }, async (request, reply) => {
    void reply.header('cache-control', 'no-store').header('referrer-policy', 'no-referrer').header('set-cookie', flowCookie(request, '', 0))
    const url = new URL(request.url, originOf(request))
    const state = url.searchParams.get('state') ?? ''
    const flowId = readCookie(request, cookieName(request, FLOW_COOKIE))
    let upstream = ''
    try {
      // The flow this browser began, and no other.
      if (flowId === undefined || flowId !== state) throw new Error('this browser did not begin this link (or its cookie expired); begin again from this page')
      for (const link of links.values()) {
        if (!await link.owns(state)) continue
        upstream = link.upstream
        await link.finish(state, url)
        return await reply.redirect(`${page}?linked=${encodeURIComponent(upstream)}`, 303)
      }
      throw new Error('this link was not begun here, or took longer than ten minutes; begin again')
    } catch (error) {
      request.log.warn({ err: error, upstream }, 'linking an upstream account failed')
      const why = (error as Error).message.slice(0, 200)
      return await reply.redirect(`${page}?failed=${encodeURIComponent(upstream || 'the account')}&why=${encodeURIComponent(why)}`, 303)
    }
  })

  app.post('/connections/:upstream/unlink', { schema: { hide: true, params: Upstream }, config: { approvalsSession: true } }, async (request, reply) => {
    refuseCrossSite(request)
    requireScope(request.principal, SCOPES.call)
    const removed = await linkOf(request.params.upstream).unlink(request.principal)
    if (!removed) throw new GatewayError('TOOLGATE_NOT_FOUND', `nothing of yours is linked at "${request.params.upstream}"`)
    return await reply.code(204).send()
  })
}

function readAsset (name: string): string {
  return readFileSync(new URL(`../approvals/page/${name}`, import.meta.url), 'utf8')
}

function flowCookie (request: FastifyRequest, value: string, maxAgeSec: number): string {
  return cookie(request, FLOW_COOKIE, value, { path: '/connections/callback', maxAgeSec, sameSite: 'Lax' })
}
