import type { FastifyInstance } from 'fastify'
import type { Credentials } from '../../src/services/upstreams/credentials/credentials.js'

/**
 * `GET /.well-known/jwks.json`: the public keys of the JWTs the gateway signs for upstreams
 * that take its word for who calls (`auth.type: identity` with `jwt`). Public, as a key set is;
 * served only when such an upstream is declared.
 */
export async function upstreamJwksRoute (app: FastifyInstance, options: { readonly jwks: NonNullable<ReturnType<Credentials['jwks']>> }): Promise<void> {
  app.get('/.well-known/jwks.json', { schema: { hide: true } }, async (_request, reply) => {
    void reply.header('cache-control', 'public, max-age=300').type('application/jwk-set+json')
    return options.jwks
  })
}
