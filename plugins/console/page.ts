import type { FastifyInstance } from 'fastify'
import { GatewayError } from '../../src/index.js'
import { pageNonce, sendPage } from '../http/page-security.js'
import { readConsoleAssets } from './assets.js'
import { consolePage } from './page-html.js'

export interface ConsolePageOptions {
  /** Offer "Sign in with your organisation" (the approvals page's OpenID Connect sign-in). */
  readonly oidcSignIn: boolean
  /** The gateway's version, shown in the header. */
  readonly version: string
}

/**
 * `GET /console`, the operators' page, open to anyone: it holds no data, only the files that
 * ask for it (every data route needs `gateway:read`). `GET /console/assets/{name}`, those
 * files, immutable under their hashed names.
 */
export async function consolePageRoutes (app: FastifyInstance, options: ConsolePageOptions): Promise<void> {
  const assets = readConsoleAssets()
  const open = { anonymous: 'always' as const }
  app.get('/console', { schema: { hide: true }, config: open }, async (_request, reply) => {
    const nonce = pageNonce()
    return await sendPage(reply, nonce, consolePage({ assets, nonce, oidc: options.oidcSignIn, version: options.version }))
  })

  app.get('/console/assets/:name', { schema: { hide: true }, config: open }, async (request, reply) => {
    const asset = assets.byName.get((request.params as { name: string }).name)
    if (asset === undefined) throw new GatewayError('TOOLGATE_NOT_FOUND', 'no such console file (its name changes with each version: reload the console)')
    const gzip = /\bgzip\b/.test(request.headers['accept-encoding'] ?? '')
    void reply
      .header('cache-control', 'public, max-age=31536000, immutable')
      .header('x-content-type-options', 'nosniff')
      .header('vary', 'accept-encoding')
      .type(asset.type)
    if (gzip) void reply.header('content-encoding', 'gzip')
    return await reply.send(gzip ? asset.gzipped : asset.body)
  })
}
