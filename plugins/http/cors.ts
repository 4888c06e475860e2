import cors from '@fastify/cors'
import type { FastifyInstance } from 'fastify'
import fp from 'fastify-plugin'
import type { Config } from '../../src/services/config.js'

/** Headers a browser script may read: what the gateway puts on its answers for clients to act on. */
const EXPOSED = ['X-Request-Id', 'Retry-After', 'Idempotent-Replayed', 'WWW-Authenticate', 'Location', 'Allow']

/**
 * CORS for browser clients, off unless origins are configured. Registered at the root, so
 * preflight requests (which carry no credentials) are answered before any authentication, for
 * every route: tool calls, listings and the document. Credentials (cookies or the
 * `Authorization` header marked as credentials by the browser) only when the operator says so.
 */
export const corsPlugin = fp(async function corsSupport (app: FastifyInstance, options: { config: Pick<Config, 'corsOrigins' | 'corsCredentials'> }) {
  const { corsOrigins, corsCredentials } = options.config
  await app.register(cors, {
    origin: corsOrigins.includes('*') ? '*' : corsOrigins,
    credentials: corsCredentials,
    methods: ['GET', 'HEAD', 'POST'],
    exposedHeaders: EXPOSED,
    maxAge: 600,
    strictPreflight: true,
  })
}, { name: 'toolgate-cors' })
