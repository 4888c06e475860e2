import { randomBytes } from 'node:crypto'
import type { FastifyReply } from 'fastify'

/** A fresh nonce for one page's script and styles. */
export function pageNonce (): string {
  return randomBytes(16).toString('base64')
}

/**
 * Send one of the gateway's pages (approvals, connections, console) under the same strict
 * policy: only the nonce'd script and styles run, requests go to this origin only, no form
 * posts anywhere, never framed, no referrer, never cached (the shell is cheap; its nonce is not
 * to be reused).
 */
export async function sendPage (reply: FastifyReply, nonce: string, html: string): Promise<FastifyReply> {
  return await reply
    .header('content-security-policy', `default-src 'none'; script-src 'nonce-${nonce}'; style-src 'nonce-${nonce}'; connect-src 'self'; form-action 'none'; frame-ancestors 'none'; base-uri 'none'`)
    .header('x-frame-options', 'DENY')
    .header('cache-control', 'no-store')
    .header('referrer-policy', 'no-referrer')
    .header('x-content-type-options', 'nosniff')
    .type('text/html; charset=utf-8')
    .send(html)
}
