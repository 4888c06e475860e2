import type { FastifyInstance } from 'fastify'
import fp from 'fastify-plugin'
import { GatewayError } from '../../src/index.js'
import { credentialParamsOf } from '../../src/services/auth/query-credentials.js'

/**
 * Refuse, on every route, a request whose query string carries a credential (`api_key`,
 * `access_token`, `token`, ...): 400 with one `errors` entry per parameter. Before
 * authentication, so the refusal is the same whether or not the credential is valid.
 */
export const queryCredentialsPlugin = fp(async function queryCredentials (app: FastifyInstance) {
  app.addHook('onRequest', (request, _reply, done) => {
    // Most requests have no query at all: one indexOf and nothing else.
    if (request.url.indexOf('?') === -1) { done(); return }
    const names = credentialParamsOf(request.url)
    if (names.length === 0) { done(); return }
    done(new GatewayError('TOOLGATE_MALFORMED_REQUEST', 'credentials are refused in the query string (they end up in logs); send them in the X-Api-Key or Authorization header', {
      errors: names.map(name => ({ pointer: `/query/${name.replace(/~/g, '~0').replace(/\//g, '~1')}`, message: 'a credential must not be sent in the URL', code: 'credential_in_query' })),
    }))
  })
}, { name: 'toolgate-query-credentials' })
