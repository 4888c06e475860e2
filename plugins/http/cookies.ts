import type { FastifyRequest } from 'fastify'
import { GatewayError } from '../../src/index.js'

/*
 * The gateway's own cookies (the approvals sign-in, a link under way) and the origin a browser
 * reached it at: one way to name, write and read them for every page that uses them.
 */

const HOST = /^[A-Za-z0-9.-]+(?::\d{1,5})?$|^\[[0-9A-Fa-f:.]+\](?::\d{1,5})?$/

/**
 * This gateway's origin as the browser reached it: Fastify's `protocol` and `host` read the
 * forwarding headers only as far as its `trustProxy` setting allows. A Host that is no host
 * name is refused rather than put into a redirect URI.
 */
export function originOf (request: FastifyRequest): string {
  if (!HOST.test(request.host)) throw new GatewayError('TOOLGATE_MALFORMED_REQUEST', 'the Host header is not a host name')
  return `${request.protocol}://${request.host}`
}

/** Over TLS a cookie is `Secure` and named `__Secure-…`, which browsers refuse to accept from plain http. */
export function cookieName (request: FastifyRequest, base: string): string {
  return request.protocol === 'https' ? `__Secure-${base}` : base
}

/** An HttpOnly cookie of the gateway's (`value` empty and `maxAgeSec` 0: gone). */
export function cookie (request: FastifyRequest, base: string, value: string, options: { path: string, maxAgeSec: number, sameSite: 'Strict' | 'Lax' }): string {
  const secure = request.protocol === 'https' ? '; Secure' : ''
  return `${cookieName(request, base)}=${value}; Path=${options.path}; Max-Age=${options.maxAgeSec}; HttpOnly; SameSite=${options.sameSite}${secure}`
}

/** A cookie of the gateway's, by its whole name: only a random id's shape is taken (16 to 128 of base64url). */
export function readCookie (request: FastifyRequest, name: string): string | undefined {
  const header = request.headers.cookie
  if (header === undefined) return undefined
  for (const part of header.split(';')) {
    const at = part.indexOf('=')
    if (at > 0 && part.slice(0, at).trim() === name) {
      const value = part.slice(at + 1).trim()
      return /^[A-Za-z0-9_-]{16,128}$/.test(value) ? value : undefined
    }
  }
  return undefined
}
