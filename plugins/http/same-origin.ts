import type { FastifyRequest } from 'fastify'
import { GatewayError } from '../../src/index.js'

/**
 * A decision is made from this origin or by a non-browser client, never by another site: a
 * browser tells where a request comes from (`Sec-Fetch-Site`, `Origin`), and a foreign one
 * is refused even when a proxy or extension would add the credential.
 */
export function refuseCrossSite (request: FastifyRequest): void {
  const site = request.headers['sec-fetch-site']
  if (site === 'cross-site' || site === 'same-site') {
    throw new GatewayError('TOOLGATE_FORBIDDEN', 'this is done from this gateway\'s own pages or by an API client, not from another site')
  }
  const origin = request.headers.origin
  if (origin === undefined) return
  const hosts = [request.headers.host, request.headers['x-forwarded-host']].flat().filter(h => h !== undefined)
  if (!hosts.some(host => sameHost(origin, host))) {
    throw new GatewayError('TOOLGATE_FORBIDDEN', `a request from origin ${origin.slice(0, 100)} is refused: use this gateway's own pages`)
  }
}

/**
 * Whether a request comes from this gateway's own pages, or from no browser page at all:
 * what a browser says (`Sec-Fetch-Site`, `Origin`) names no other site. The page's sign-in
 * cookie is worth something only then, so that no other site (a same-site one included, to
 * which SameSite=Strict cookies still go, and which CORS may allow) reads or decides with it.
 */
export function fromThisSite (request: FastifyRequest): boolean {
  const site = request.headers['sec-fetch-site']
  if (site !== undefined && site !== 'same-origin' && site !== 'none') return false
  const origin = request.headers.origin
  if (origin === undefined) return true
  const hosts = [request.headers.host, request.headers['x-forwarded-host']].flat().filter(h => h !== undefined)
  return hosts.some(host => sameHost(origin, host))
}

/** Host headers carry no scheme: read one as if under the origin's scheme, so default ports compare equal. */
function sameHost (origin: string, host: string): boolean {
  try {
    const url = new URL(origin)
    return new URL(`${url.protocol}//${host}`).host === url.host
  } catch {
    return false // `null` or garbage
  }
}
