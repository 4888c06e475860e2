import { randomBytes } from 'node:crypto'
import { readFileSync } from 'node:fs'
import type { AddressInfo } from 'node:net'
import { Writable } from 'node:stream'
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client'
import { Redis } from 'ioredis'
import { afterEach, describe, expect, it } from 'vitest'
import type { FastifyInstance } from 'fastify'
import { buildApp } from '../../../plugins/app.js'
import { loadConfig, type ConfigInput } from '../../../src/services/config.js'
import { API_KEYS, KEYS } from '../../approvals/helpers.js'
import { SLOW } from '../../slow.js'
import { freePort, tempDir, upstreamsFile } from '../helpers.js'
import { cleanPrefix, HAVE_REDIS, REDIS_URL, testPrefix } from '../../redis/redis-env.js'
import { CALLER_AUDIENCE, CALLER_ISSUER, GATEWAY_CLIENT, startAuthorizationServer, type AuthorizationServer } from './authorization-server.js'
import { startBearerApi, startBearerMcpServer, type BearerUpstream } from './bearer-upstreams.js'

/*
 * Upstreams reached as someone: the gateway's own OAuth client (client credentials) and each
 * caller's token exchanged (RFC 8693) at a real authorization server (oidc-provider), toward a
 * remote MCP server on the official SDK behind its bearer-auth middleware and an HTTP API that
 * checks its bearer. Every upstream answers with the subject it saw.
 */

const closers: Array<() => Promise<void>> = []
afterEach(async () => {
  for (const close of closers.splice(0).reverse()) await close()
})

interface Rig {
  readonly issuer: AuthorizationServer
  readonly mcp: BearerUpstream
  readonly api: BearerUpstream
}

async function rig (options: { readonly accessTokenTtlSec?: number } = {}): Promise<Rig> {
  const issuer = await startAuthorizationServer(options)
  closers.push(issuer.close)
  const trust = { jwksUrl: `${issuer.url}/jwks`, issuer: issuer.url }
  const mcp = await startBearerMcpServer(trust)
  const api = await startBearerApi(trust)
  closers.push(mcp.close, api.close)
  return { issuer, mcp, api }
}

type Mode = 'client_credentials' | 'token_exchange'

function authOf (mode: Mode, issuer: string, audience: string): Record<string, unknown> {
  const client = { issuer, clientId: GATEWAY_CLIENT.id, clientSecret: '${TOOLGATE_TEST_CLIENT_SECRET}' }
  return mode === 'client_credentials' ? { type: mode, ...client, resource: audience } : { type: mode, ...client, audience }
}

async function gateway ({ issuer, mcp, api }: Rig, mode: Mode, extra: ConfigInput = {}, logs?: string[], file: Record<string, unknown> = {}): Promise<FastifyInstance> {
  process.env.TOOLGATE_TEST_CLIENT_SECRET = GATEWAY_CLIENT.secret
  const config = loadConfig({ JWT_ISSUER: CALLER_ISSUER, JWT_AUDIENCE: CALLER_AUDIENCE, JWT_KEY: issuer.callerKeyPem, JWT_ALGORITHMS: 'RS256' }, {
    apiKeys: API_KEYS,
    upstreamsFile: upstreamsFile({
      mcpServers: { bearer: { url: mcp.url, auth: authOf(mode, issuer.url, mcp.url) } },
      openapi: { api: { document: `${api.url}/openapi.json`, auth: authOf(mode, issuer.url, api.url) } },
      ...file,
    }),
    ...extra,
  })
  const stream = new Writable({ write (chunk, _encoding, done) { logs?.push(String(chunk)); done() } })
  const app = await buildApp({ config, tools: [], ...(logs === undefined ? {} : { logger: { level: 'debug', stream } }) })
  closers.push(async () => { await app.close() })
  return app
}

const alice = { 'x-api-key': KEYS.alice }
const bearer = (token: string): Record<string, string> => ({ authorization: `Bearer ${token}` })

describe('upstream credentials', { timeout: SLOW.PROCESS_MS }, () => {
  it('client credentials: every call carries the gateway\'s own token, fetched once however many calls wait', async () => {
    const r = await rig()
    const logs: string[] = []
    const app = await gateway(r, 'client_credentials', {}, logs)
    // One token for the MCP server (connecting and listing used it), one for the API.
    expect(r.issuer.grants.filter(grant => grant.type === 'client_credentials')).toHaveLength(1)
    const calls = await Promise.all(Array.from({ length: 20 }, async (_, i) => await app.inject({ method: 'POST', url: i % 2 === 0 ? '/tools/bearer_whoami' : '/tools/api_whoami', payload: {}, headers: alice })))
    for (const call of calls) expect(call.statusCode, call.body).toBe(200)
    expect(new Set(r.mcp.subjects)).toEqual(new Set([GATEWAY_CLIENT.id]))
    expect(new Set(r.api.subjects)).toEqual(new Set([GATEWAY_CLIENT.id]))
    expect(r.issuer.grants.filter(grant => grant.type === 'client_credentials')).toHaveLength(2)

    // Shown nowhere: not in the dry run, /upstreams, the metrics or the logs.
    const tokens = [...r.mcp.tokens, ...r.api.tokens].filter(value => value !== '').map(value => value.replace('Bearer ', ''))
    const dry = await app.inject({ method: 'POST', url: '/tools/api_whoami?dryRun=true', payload: {}, headers: alice })
    expect(dry.statusCode, dry.body).toBe(200)
    expect(dry.json()).toMatchObject({ headers: { authorization: '[redacted]' } })
    const upstreams = await app.inject({ method: 'GET', url: '/upstreams', headers: alice })
    expect(upstreams.json<{ upstreams: Array<{ name: string, auth?: string }> }>().upstreams.map(({ name, auth }) => [name, auth]).sort()).toEqual([['api', 'client_credentials'], ['bearer', 'client_credentials']])
    const metrics = await app.inject({ method: 'GET', url: '/metrics' })
    expect(metrics.body).toMatch(/toolgate_upstream_tokens_fetched_total\{upstream="api",mode="client_credentials"\} 1/)
    for (const text of [dry.body, upstreams.body, metrics.body, logs.join('')]) {
      for (const token of tokens) expect(text).not.toContain(token)
      expect(text).not.toContain(GATEWAY_CLIENT.secret)
    }

    // A replayed idempotent call sends nothing upstream.
    const sent = r.api.tokens.length
    const once = await app.inject({ method: 'POST', url: '/tools/api_whoami', payload: {}, headers: { ...alice, 'idempotency-key': 'whoami-1' } })
    const again = await app.inject({ method: 'POST', url: '/tools/api_whoami', payload: {}, headers: { ...alice, 'idempotency-key': 'whoami-1' } })
    expect([once.statusCode, again.statusCode, again.headers['idempotent-replayed']]).toEqual([200, 200, 'true'])
    expect(r.api.tokens.length).toBe(sent + 1)
  })

  it('token exchange: each caller reaches the upstreams as themselves, never as another, however many call at once', async () => {
    const r = await rig()
    const app = await gateway(r, 'token_exchange')
    const people = Array.from({ length: 12 }, (_, i) => `person-${i}`)
    const tokens = new Map(await Promise.all(people.map(async person => [person, await r.issuer.mintCaller(person)] as const)))
    // Every person calls both upstreams several times, all at once, interleaved.
    const order = people.flatMap(person => [person, person, person]).sort(() => Math.random() - 0.5)
    const answers = await Promise.all(order.flatMap(person => ['bearer_whoami', 'api_whoami'].map(async tool => {
      const response = await app.inject({ method: 'POST', url: `/tools/${tool}`, payload: {}, headers: bearer(tokens.get(person)!) })
      return { person, tool, status: response.statusCode, body: response.json<{ subject?: string, structuredContent?: { subject: string } }>() }
    })))
    for (const answer of answers) {
      expect(answer.status, JSON.stringify(answer)).toBe(200)
      expect(answer.body.subject ?? answer.body.structuredContent?.subject).toBe(answer.person)
    }
    // One exchange per person and upstream: the rest were kept.
    const exchanges = r.issuer.grants.filter(grant => grant.type.endsWith('token-exchange'))
    expect(exchanges).toHaveLength(people.length * 2)
    expect(new Set(exchanges.map(grant => `${grant.subject} ${grant.audience}`)).size).toBe(people.length * 2)

    // A caller with an API key has no token to exchange: refused, nothing sent.
    const before = r.api.tokens.length
    const byKey = await app.inject({ method: 'POST', url: '/tools/api_whoami', payload: {}, headers: alice })
    expect(byKey.statusCode).toBe(403)
    expect(byKey.json()).toMatchObject({ code: 'TOOLGATE_CREDENTIAL_NOT_EXCHANGEABLE' })
    expect(r.api.tokens.length).toBe(before)
  })

  it('a token endpoint down or slow answers 503 with Retry-After and sends nothing upstream', async () => {
    const r = await rig()
    const app = await gateway(r, 'token_exchange', { toolTimeoutMs: 1_000 })
    const token = await r.issuer.mintCaller('erin')
    r.issuer.setTrouble({ kind: 'down' })
    const before = r.api.tokens.length
    const down = await app.inject({ method: 'POST', url: '/tools/api_whoami', payload: {}, headers: bearer(token) })
    expect(down.statusCode, down.body).toBe(503)
    expect(down.json()).toMatchObject({ code: 'TOOLGATE_CREDENTIAL_UNAVAILABLE' })
    expect(Number(down.headers['retry-after'])).toBeGreaterThanOrEqual(1)
    // Slow: the call waits a share of its timeout (here 1 s), then 503, not a 504 after it.
    await new Promise(resolve => setTimeout(resolve, 2_100))
    r.issuer.setTrouble({ kind: 'slow', ms: 3_000 })
    const started = Date.now()
    const slow = await app.inject({ method: 'POST', url: '/tools/api_whoami', payload: {}, headers: bearer(token) })
    expect(slow.statusCode, slow.body).toBe(503)
    expect(slow.json()).toMatchObject({ code: 'TOOLGATE_CREDENTIAL_UNAVAILABLE' })
    expect(Date.now() - started).toBeLessThan(1_000)
    expect(r.api.tokens.length).toBe(before)
    r.issuer.setTrouble(undefined)
    await new Promise(resolve => setTimeout(resolve, 3_500))
    expect((await app.inject({ method: 'POST', url: '/tools/api_whoami', payload: {}, headers: bearer(token) })).statusCode).toBe(200)
  })

  it('a kept token the upstream refuses is fetched anew once; a new one refused is a 502 and dropped', async () => {
    const r = await rig()
    const app = await gateway(r, 'client_credentials')
    expect((await app.inject({ method: 'POST', url: '/tools/api_whoami', payload: {}, headers: alice })).statusCode).toBe(200)
    // Revoked at the issuer since: the next call is refused once, gets a new token and runs.
    r.api.revoked.add(r.api.tokens.at(-1)!.replace('Bearer ', ''))
    const again = await app.inject({ method: 'POST', url: '/tools/api_whoami', payload: {}, headers: alice })
    expect(again.statusCode, again.body).toBe(200)
    expect(r.api.refusals()).toBe(1)
    expect(r.issuer.grants.filter(grant => grant.type === 'client_credentials')).toHaveLength(3)
    // The MCP server too, through its SDK's bearer middleware.
    r.mcp.revoked.add(r.mcp.tokens.at(-1)!.replace('Bearer ', ''))
    const mcpAgain = await app.inject({ method: 'POST', url: '/tools/bearer_whoami', payload: {}, headers: alice })
    expect(mcpAgain.statusCode, mcpAgain.body).toBe(200)

    // Every token refused from now on: a fresh one refused is the upstream's configuration, 502.
    const refuseAll = (upstream: BearerUpstream): void => { upstream.revoked.add = () => upstream.revoked; upstream.revoked.has = () => true }
    refuseAll(r.api)
    const refused = await app.inject({ method: 'POST', url: '/tools/api_whoami', payload: {}, headers: alice })
    expect(refused.statusCode).toBe(502)
    expect(refused.json()).toMatchObject({ code: 'TOOLGATE_UPSTREAM_UNAUTHORIZED' })
    refuseAll(r.mcp)
    const mcpRefused = await app.inject({ method: 'POST', url: '/tools/bearer_whoami', payload: {}, headers: alice })
    expect(mcpRefused.statusCode, mcpRefused.body).toBe(502)
    expect(mcpRefused.json()).toMatchObject({ code: 'TOOLGATE_UPSTREAM_UNAUTHORIZED' })
    const metrics = await app.inject({ method: 'GET', url: '/metrics' })
    expect(metrics.body).toMatch(/toolgate_upstream_credential_failures_total\{upstream="api",mode="client_credentials",reason="rejected_by_upstream"\} 1/)
  })

  it('an approved call runs as the requester, its replay sends nothing, and the audit line names the mode, not the token', async () => {
    const r = await rig()
    const auditLog = `${tempDir()}/audit.jsonl`
    const app = await gateway(r, 'token_exchange', { auditLog, auditFlushMs: 10 }, undefined, { tools: { api_whoami: { requiresApproval: true, isReadOnly: false } } })
    const token = await r.issuer.mintCaller('frank')
    const asked = await app.inject({ method: 'POST', url: '/tools/api_whoami', payload: {}, headers: bearer(token) })
    expect(asked.statusCode, asked.body).toBe(202)
    const { id } = asked.json<{ id: string }>()
    expect(r.api.subjects).toEqual([])
    expect((await app.inject({ method: 'POST', url: `/approvals/${id}/approve`, headers: { 'x-api-key': KEYS.bob } })).statusCode).toBe(200)
    const ran = await app.inject({ method: 'POST', url: '/tools/api_whoami', payload: {}, headers: { ...bearer(token), 'approval-id': id } })
    expect(ran.statusCode, ran.body).toBe(200)
    expect(ran.json()).toEqual({ subject: 'frank' })
    const replay = await app.inject({ method: 'POST', url: '/tools/api_whoami', payload: {}, headers: { ...bearer(token), 'approval-id': id } })
    expect(replay.json()).toEqual({ subject: 'frank' })
    expect(r.api.subjects).toEqual(['frank'])
    expect(r.api.tokens).toHaveLength(1)
    await app.close()
    const lines = readFileSync(auditLog, 'utf8').trim().split('\n').map(line => JSON.parse(line) as Record<string, unknown>).filter(line => line.event === 'call' && line.executed === true)
    expect(lines, readFileSync(auditLog, 'utf8')).toHaveLength(1)
    expect(lines[0]).toMatchObject({ principal: 'jwt:frank', tool: 'api_whoami', credential: 'token_exchange', approvalId: id })
    const trail = readFileSync(auditLog, 'utf8')
    for (const sent of r.api.tokens) expect(trail).not.toContain(sent.replace('Bearer ', ''))
    expect(trail).not.toContain(token)
  })

  it('over MCP: an SDK client signed in with its bearer reaches the remote server as its caller', async () => {
    const r = await rig()
    const app = await gateway(r, 'token_exchange')
    await app.listen({ port: 0, host: '127.0.0.1' })
    const { port } = app.server.address() as AddressInfo
    const token = await r.issuer.mintCaller('grace')
    const client = new Client({ name: 'identity-test', version: '1.0.0' })
    await client.connect(new StreamableHTTPClientTransport(new URL(`http://127.0.0.1:${port}/mcp`), { requestInit: { headers: bearer(token) } }))
    closers.push(async () => { await client.close() })
    const result = await client.callTool({ name: 'bearer_whoami', arguments: {} })
    expect(result.structuredContent).toEqual({ subject: 'grace' })
    const viaApi = await client.callTool({ name: 'api_whoami', arguments: {} })
    expect(viaApi.structuredContent).toEqual({ subject: 'grace' })
    expect(r.mcp.subjects).toEqual(['grace'])
  })

  it.skipIf(!HAVE_REDIS)('two replicas on Redis share one token: one fetch for both, sealed at rest', async () => {
    const r = await rig()
    const prefix = testPrefix()
    closers.push(async () => { await cleanPrefix(prefix) })
    const shared: ConfigInput = { redisUrl: REDIS_URL, redisPrefix: prefix, credentialsKey: randomBytes(32).toString('base64') }
    const one = await gateway(r, 'client_credentials', shared)
    const two = await gateway(r, 'client_credentials', shared)
    // Connecting both fetched the MCP server's token once; the API's is fetched by the first call of either.
    const calls = await Promise.all(Array.from({ length: 30 }, async (_, i) => await (i % 2 === 0 ? one : two).inject({ method: 'POST', url: '/tools/api_whoami', payload: {}, headers: alice })))
    for (const call of calls) expect(call.statusCode, call.body).toBe(200)
    expect(r.issuer.grants.filter(grant => grant.type === 'client_credentials')).toHaveLength(2)
    const redis = new Redis(REDIS_URL)
    closers.push(async () => { await redis.quit() })
    const keys = await redis.keys(`${prefix}credential:token:*`)
    expect(keys).toHaveLength(2)
    const stored = await Promise.all(keys.map(async key => await redis.get(key)))
    for (const value of stored) {
      for (const sent of [...r.api.tokens, ...r.mcp.tokens]) expect(value).not.toContain(sent.replace('Bearer ', ''))
      expect(value!.split('.')).toHaveLength(5)
    }
  })

  it('start-up refuses a credential that cannot work, naming the upstream and field', async () => {
    const r = await rig()
    process.env.TOOLGATE_TEST_CLIENT_SECRET = GATEWAY_CLIENT.secret
    const build = async (auth: Record<string, unknown>, extra: ConfigInput = {}): Promise<unknown> => {
      const config = loadConfig({}, { apiKeys: API_KEYS, upstreamsFile: upstreamsFile({ openapi: { api: { document: `${r.api.url}/openapi.json`, auth } } }), ...extra })
      const app = await buildApp({ config, tools: [] })
      await app.close()
      return undefined
    }
    const client = { clientId: GATEWAY_CLIENT.id, clientSecret: '${TOOLGATE_TEST_CLIENT_SECRET}' }
    await expect(build({ type: 'client_credentials', issuer: `${r.issuer.url}/elsewhere`, ...client })).rejects.toThrow(/openapi\.api\.auth: .*answered 404/)
    await expect(build({ type: 'client_credentials', issuer: r.issuer.url, tokenEndpoint: `${r.issuer.url}/token`, ...client })).rejects.toThrow(/openapi\.api\.auth: give either "issuer" .* or "tokenEndpoint", not both/)
    await expect(build({ type: 'client_credentials', issuer: 'http://issuer.example', ...client })).rejects.toThrow(/openapi\.api\.auth\.issuer: must be an https:\/\/ URL/)
    await expect(build({ type: 'client_credentials', issuer: r.issuer.url, clientId: 'x', clientSecret: '${TOOLGATE_TEST_UNSET_SECRET}' })).rejects.toThrow(/openapi\.api\.auth\.clientSecret: \$\{TOOLGATE_TEST_UNSET_SECRET\} is not set/)
    await expect(build({ type: 'identity', headers: { 'X-User': '{principal.email}' } })).rejects.toThrow(/openapi\.api\.auth\.headers\.X-User: \{principal\.email\} is not one of/)
    await expect(build({ type: 'client_credentials', issuer: r.issuer.url, ...client }, { redisUrl: 'redis://127.0.0.1:6379' })).rejects.toThrow(/openapi\.api\.auth: with REDIS_URL, .* set CREDENTIALS_KEY/)
    await expect(build({ type: 'client_credentials', issuer: r.issuer.url, ...client, scopes: 'x' })).rejects.toThrow(/openapi\.api\.auth: unknown key "scopes"/)
    await expect(build({ type: 'link', clientId: 'x' })).rejects.toThrow(/openapi\.api\.auth\.issuer: is needed for a service/)
    // A remote MCP server whose link names no issuer, and which serves no metadata to find one by.
    const silent = loadConfig({}, { apiKeys: API_KEYS, upstreamsFile: upstreamsFile({ mcpServers: { quiet: { url: r.mcp.url, auth: { type: 'link' } } } }) })
    await expect(buildApp({ config: silent, tools: [] })).rejects.toThrow(/mcpServers\.quiet\.auth: the server serves no protected resource metadata/)
  })

  it('identity: the caller asserted in headers and in a JWT the gateway signs, which the upstream verifies with the gateway\'s JWKS', async () => {
    const gatewayIssuer = 'https://toolgate.test'
    // The upstream trusts the gateway's key set: served by the gateway, read over HTTP by the upstream.
    const port = await freePort()
    const api = await startBearerApi({ jwksUrl: `http://127.0.0.1:${port}/.well-known/jwks.json`, issuer: gatewayIssuer })
    closers.push(api.close)
    const config = loadConfig({}, {
      apiKeys: API_KEYS, port,
      upstreamsFile: upstreamsFile({ openapi: { api: { document: `${api.url}/openapi.json`, auth: { type: 'identity', headers: { 'X-Toolgate-Principal': '{principal.id}', 'X-Toolgate-Scopes': '{principal.scopes}' }, jwt: { audience: api.url, issuer: gatewayIssuer, ttlSeconds: 30 } } } } }),
    })
    const app = await buildApp({ config, tools: [] })
    closers.push(async () => { await app.close() })
    await app.listen({ port, host: '127.0.0.1' })
    const jwks = await (await fetch(`http://127.0.0.1:${port}/.well-known/jwks.json`)).json() as { keys: Array<{ kid: string, d?: string }> }
    expect(jwks.keys).toHaveLength(1)
    expect(jwks.keys[0]!.d).toBeUndefined()
    const called = await fetch(`http://127.0.0.1:${port}/tools/api_whoami`, { method: 'POST', headers: { ...alice, 'content-type': 'application/json' }, body: '{}' })
    expect(called.status).toBe(200)
    expect(await called.json()).toEqual({ subject: 'alice' })
    const carol = await fetch(`http://127.0.0.1:${port}/tools/api_whoami`, { method: 'POST', headers: { 'x-api-key': KEYS.carol, 'content-type': 'application/json' }, body: '{}' })
    expect(await carol.json()).toEqual({ subject: 'carol' })
    expect(api.subjects).toEqual(['alice', 'carol'])
    expect(api.headers.map(headers => [headers['x-toolgate-principal'], headers['x-toolgate-scopes']])).toEqual([['alice', 'tools:read tools:call'], ['carol', 'tools:read tools:call']])
  })
})
