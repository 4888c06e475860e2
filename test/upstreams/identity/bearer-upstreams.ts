import { createServer, type IncomingHttpHeaders, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import express from 'express'
import { createRemoteJWKSet, jwtVerify } from 'jose'
import { z } from 'zod'
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js'
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js'
import { requireBearerAuth } from '@modelcontextprotocol/sdk/server/auth/middleware/bearerAuth.js'
import { InvalidTokenError } from '@modelcontextprotocol/sdk/server/auth/errors.js'
import type { AuthInfo } from '@modelcontextprotocol/sdk/server/auth/types.js'

/*
 * Upstreams that check bearer tokens, as services a team runs would: a remote MCP server on
 * the official SDK behind its bearer-auth middleware, and an HTTP API with an OpenAPI document.
 * Each answers with the subject it saw, and counts what it refused.
 */

export interface Trust {
  /** Where the signing keys are: the authorization server's, or the gateway's own JWKS. */
  readonly jwksUrl: string
  readonly issuer: string
}

export interface BearerUpstream {
  readonly url: string
  /** The subject of every request it accepted, in order (the MCP server: of tool calls only). */
  readonly subjects: string[]
  /** Requests refused 401. */
  readonly refusals: () => number
  /** Tokens to refuse from now on, as if revoked at the issuer. */
  readonly revoked: Set<string>
  /** Every Authorization header value that reached it. */
  readonly tokens: string[]
  /** Every call's headers (the API only). */
  readonly headers: IncomingHttpHeaders[]
  close: () => Promise<void>
}

function verifierOf (trust: Trust, audience: () => string, revoked: Set<string>): (token: string) => Promise<{ subject: string, scopes: string[], clientId: string }> {
  const keys = createRemoteJWKSet(new URL(trust.jwksUrl))
  return async token => {
    if (revoked.has(token)) throw new Error('revoked')
    const { payload } = await jwtVerify(token, keys, { issuer: trust.issuer, audience: audience() })
    return { subject: String(payload.sub), scopes: typeof payload.scope === 'string' ? payload.scope.split(' ') : [], clientId: typeof payload.client_id === 'string' ? payload.client_id : String(payload.sub) }
  }
}

/**
 * A stateless MCP server (one server per request, the SDK's own pattern) with a `whoami` tool.
 * With `advertise`, it serves its protected resource metadata (RFC 9728) naming its issuer, as
 * an MCP server does for MCP clients to find where to get a token.
 */
export async function startBearerMcpServer (trust: Trust, options: { readonly advertise?: boolean } = {}): Promise<BearerUpstream> {
  const subjects: string[] = []
  const tokens: string[] = []
  const revoked = new Set<string>()
  let refusals = 0
  let url = ''
  const verify = verifierOf(trust, () => url, revoked)
  const app = express()
  app.use(express.json())
  if (options.advertise === true) {
    app.get('/.well-known/oauth-protected-resource/mcp', (_request, response) => { response.json({ resource: url, authorization_servers: [trust.issuer], scopes_supported: ['upstream:use'] }) })
  }
  app.use((request, response, next) => {
    tokens.push(request.headers.authorization ?? '')
    response.on('finish', () => { if (response.statusCode === 401) refusals++ })
    next()
  })
  app.use(requireBearerAuth({
    verifier: {
      verifyAccessToken: async (token): Promise<AuthInfo> => {
        try {
          const { subject, scopes, clientId } = await verify(token)
          return { token, clientId, scopes, expiresAt: Math.floor(Date.now() / 1000) + 60, extra: { subject } }
        } catch (error) {
          throw new InvalidTokenError((error as Error).message)
        }
      },
    },
  }))
  app.post('/mcp', async (request, response) => {
    const server = new McpServer({ name: 'bearer-upstream', version: '1.0.0' })
    server.registerTool('whoami', { description: 'Who the server sees calling', inputSchema: { note: z.string().optional() } }, async (_args, extra) => {
      const subject = String(extra.authInfo?.extra?.subject)
      subjects.push(subject)
      return { content: [{ type: 'text', text: subject }], structuredContent: { subject } }
    })
    const transport = new StreamableHTTPServerTransport({ sessionIdGenerator: undefined, enableJsonResponse: true })
    response.on('close', () => { void transport.close(); void server.close() })
    await server.connect(transport)
    await transport.handleRequest(request, response, request.body)
  })
  const server = await listen(app)
  url = `${baseOf(server)}/mcp`
  return { url, subjects, tokens, headers: [], revoked, refusals: () => refusals, close: async () => { await close(server) } }
}

/** An HTTP API that takes bearer tokens: `GET /whoami`, described by `GET /openapi.json`. */
export async function startBearerApi (trust: Trust): Promise<BearerUpstream> {
  const subjects: string[] = []
  const tokens: string[] = []
  const headers: IncomingHttpHeaders[] = []
  const revoked = new Set<string>()
  let refusals = 0
  let base = ''
  const verify = verifierOf(trust, () => base, revoked)
  const server = createServer((request, response) => {
    if (request.url === '/openapi.json') {
      response.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(DOCUMENT(base)))
      return
    }
    const authorization = request.headers.authorization ?? ''
    tokens.push(authorization)
    headers.push(request.headers)
    verify(authorization.replace(/^Bearer /, '')).then(({ subject }) => {
      subjects.push(subject)
      response.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ subject }))
    }, () => {
      refusals++
      response.writeHead(401, { 'content-type': 'application/json', 'www-authenticate': 'Bearer error="invalid_token"' }).end(JSON.stringify({ error: 'invalid_token' }))
    })
  })
  await new Promise<void>(resolve => server.listen(0, '127.0.0.1', resolve))
  base = baseOf(server)
  return { url: base, subjects, tokens, headers, revoked, refusals: () => refusals, close: async () => { await close(server) } }
}

const DOCUMENT = (base: string): object => ({
  openapi: '3.1.0',
  info: { title: 'Who am I', version: '1.0.0' },
  servers: [{ url: base }],
  paths: {
    '/whoami': {
      get: {
        operationId: 'whoami',
        summary: 'Who the service sees calling',
        responses: { 200: { description: 'The subject', content: { 'application/json': { schema: { type: 'object', properties: { subject: { type: 'string' } }, required: ['subject'] } } } } },
      },
    },
  },
})

async function listen (app: express.Express): Promise<Server> {
  const server = createServer(app)
  await new Promise<void>(resolve => server.listen(0, '127.0.0.1', resolve))
  return server
}

function baseOf (server: Server): string {
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`
}

async function close (server: Server): Promise<void> {
  server.closeAllConnections()
  await new Promise(resolve => server.close(resolve))
}
