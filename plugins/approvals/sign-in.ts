import type { FastifyInstance, FastifyRequest } from 'fastify'
import fp from 'fastify-plugin'
import { GatewayError } from '../../src/index.js'
import type { OidcSignIn } from '../../src/services/approvals/sign-in/oidc-sign-in.js'
import { fromThisSite, refuseCrossSite } from '../http/same-origin.js'
import { cookie, cookieName, originOf, readCookie } from '../http/cookies.js'

declare module 'fastify' {
  interface FastifyContextConfig {
    /** The approvals page's sign-in session (a cookie) authenticates this route when no credential is sent. */
    approvalsSession?: true
  }
  interface FastifyRequest {
    /** Authenticated by the page's sign-in cookie (not by a credential it sent). */
    approvalsSession: boolean
  }
}

export interface ApprovalsSignInOptions {
  readonly signIn: OidcSignIn
}

/*
 * The page's OpenID Connect sign-in, as cookies: the session cookie holds only a random id
 * (HttpOnly, SameSite=Strict, Secure over TLS, scoped to the approvals paths); the tokens stay
 * in the gateway's store. A route that opts in (`approvalsSession`) gets the session's access
 * token as its bearer credential before admission runs, so the token is verified like any
 * other JWT and nothing else about authentication changes. Other routes (tool calls, MCP)
 * never read the cookie: a browser's ambient credential cannot call a tool.
 */
const SESSION_COOKIE = 'toolgate-approvals'
const FLOW_COOKIE = 'toolgate-approvals-flow'
/** Where the browser goes once signed in, when it came from another page than the approvals one. */
const NEXT_COOKIE = 'toolgate-approvals-next'
/** The pages a sign-in may return to (`?next=`): a closed set, never a URL a link could choose. */
const NEXT_PAGES: Readonly<Record<string, string>> = { connections: '/connections/ui', console: '/console' }

/** The cookie hook, registered before admission in the authenticated scope (fastify-plugin: it reaches the sibling routes). */
export const approvalsSessionHook = fp(async function approvalsSession (app: FastifyInstance, { signIn }: ApprovalsSignInOptions) {
  const paths = cookiePaths(app.prefix)
  app.decorateRequest('approvalsSession', false)
  // Callback style, and out at once for every route that did not opt in: the tool call path pays one property read.
  app.addHook('onRequest', (request, reply, done) => {
    if (request.routeOptions.config.approvalsSession !== true || request.headers.authorization !== undefined || request.headers['x-api-key'] !== undefined || !fromThisSite(request)) {
      done()
      return
    }
    const sessionId = readCookie(request, cookieName(request, SESSION_COOKIE))
    if (sessionId === undefined) {
      done()
      return
    }
    signIn.accessToken(sessionId).then(token => {
      if (token === undefined) void reply.header('set-cookie', clearSession(request, paths))
      else {
        request.headers.authorization = `Bearer ${token}`
        request.approvalsSession = true
      }
      done()
    }, (error: unknown) => { done(unavailable(error)) })
  })
}, { name: 'toolgate-approvals-session' })

/** `GET /approvals/ui/login`, `GET /approvals/ui/callback`, `POST /approvals/ui/logout`. */
export async function approvalsSignInRoutes (app: FastifyInstance, { signIn }: ApprovalsSignInOptions): Promise<void> {
  const paths = cookiePaths(app.prefix)
  const page = `${app.prefix}/approvals/ui`
  const open = { anonymous: 'always' as const }

  app.get('/approvals/ui/login', { schema: { hide: true }, config: open }, async (request, reply) => {
    const { flowId, url } = await signIn.begin(`${originOf(request)}${page}/callback`)
    const next = (request.query as { next?: string }).next
    const returnTo = next !== undefined && Object.hasOwn(NEXT_PAGES, next) ? next : undefined
    // Lax: the issuer's redirect back is a cross-site navigation, which must carry this cookie.
    return await reply
      .header('set-cookie', [
        cookie(request, FLOW_COOKIE, flowId, { path: paths.callback, maxAgeSec: 600, sameSite: 'Lax' }),
        cookie(request, NEXT_COOKIE, returnTo ?? '', { path: paths.callback, maxAgeSec: returnTo === undefined ? 0 : 600, sameSite: 'Lax' }),
      ])
      .header('cache-control', 'no-store')
      .redirect(url, 302)
  })

  app.get('/approvals/ui/callback', { schema: { hide: true }, config: open }, async (request, reply) => {
    const flowId = readCookie(request, cookieName(request, FLOW_COOKIE))
    const clearFlow = cookie(request, FLOW_COOKIE, '', { path: paths.callback, maxAgeSec: 0, sameSite: 'Lax' })
    void reply.header('cache-control', 'no-store').header('referrer-policy', 'no-referrer')
    try {
      if (flowId === undefined) throw new Error('no sign-in under way in this browser (cookie missing or expired)')
      const sessionId = await signIn.finish(flowId, new URL(request.url, originOf(request)))
      const session = cookie(request, SESSION_COOKIE, sessionId, { path: paths.session, maxAgeSec: Math.floor(signIn.sessionTtlMs / 1000), sameSite: 'Strict' })
      const returnTo = readCookie(request, cookieName(request, NEXT_COOKIE))
      const next = returnTo !== undefined && Object.hasOwn(NEXT_PAGES, returnTo) ? `${app.prefix}${NEXT_PAGES[returnTo]}` : page
      // An older gateway's cookie at the approvals path would be sent before this one: gone.
      const legacy = cookie(request, SESSION_COOKIE, '', { path: paths.legacy, maxAgeSec: 0, sameSite: 'Strict' })
      return await reply.header('set-cookie', [clearFlow, cookie(request, NEXT_COOKIE, '', { path: paths.callback, maxAgeSec: 0, sameSite: 'Lax' }), legacy, session]).redirect(next, 303)
    } catch (error) {
      request.log.warn({ err: error }, 'approvals page sign-in failed')
      return await reply.header('set-cookie', clearFlow).redirect(`${page}?signin=failed`, 303)
    }
  })

  app.post('/approvals/ui/logout', { schema: { hide: true }, config: open }, async (request, reply) => {
    refuseCrossSite(request)
    const sessionId = readCookie(request, cookieName(request, SESSION_COOKIE))
    if (sessionId !== undefined) await signIn.end(sessionId).catch((error: unknown) => { throw unavailable(error) })
    return await reply.header('set-cookie', clearSession(request, paths)).code(204).send()
  })
}

/** The session cookie gone: at its path, and at the approvals path an older gateway gave it (which a browser would otherwise send first). */
function clearSession (request: FastifyRequest, paths: { session: string, legacy: string }): string[] {
  return [paths.session, paths.legacy].map(path => cookie(request, SESSION_COOKIE, '', { path, maxAgeSec: 0, sameSite: 'Strict' }))
}

/** The session covers the approvals and the connections pages (only routes that opt in read it); the flow, its callback. */
function cookiePaths (prefix: string): { session: string, legacy: string, callback: string } {
  return { session: `${prefix}/`, legacy: `${prefix}/approvals`, callback: `${prefix}/approvals/ui/callback` }
}

function unavailable (error: unknown): GatewayError {
  return error instanceof GatewayError ? error : new GatewayError('TOOLGATE_UNAVAILABLE', 'the sign-in session store cannot be reached; retry shortly', { retryAfter: 1 }, { cause: error })
}

