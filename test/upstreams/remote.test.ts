import type { ChildProcess } from 'node:child_process'
import { createServer, type IncomingHttpHeaders, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import { Writable } from 'node:stream'
import { afterEach, describe, expect, it } from 'vitest'
import type { FastifyInstance } from 'fastify'
import { buildApp } from '../../plugins/app.js'
import { loadConfig } from '../../src/services/config.js'
import { tracingFromEnv } from '../../src/services/tracing/setup.js'
import { API_KEYS, KEYS } from '../approvals/helpers.js'
import { SLOW } from '../slow.js'
import { OtlpReceiver } from '../tracing/otlp-receiver.js'
import { EVERYTHING, eventually, fixture, freePort, serverScript, tempDir, upstreamsFile } from './helpers.js'

/*
 * Remote upstreams over Streamable HTTP: server-everything (a 2025-11-25 server) and a
 * 2026-07-28-only server on the 2.x SDK, behind a proxy that records what reached it, so the
 * test sees which headers an upstream gets.
 */

const children: ChildProcess[] = []
const servers: Server[] = []
const apps: FastifyInstance[] = []
afterEach(async () => {
  await Promise.all(apps.splice(0).map(async app => { await app.close() }))
  for (const child of children.splice(0)) child.kill('SIGKILL')
  await Promise.all(servers.splice(0).map(async server => { await new Promise(resolve => server.close(resolve)) }))
})

/** Start a server script (see `serverScript`), stopped after the test. */
async function startServer (args: string[], env: Record<string, string> = {}): Promise<{ port: number, child: ChildProcess }> {
  return await serverScript(args, env, children)
}

/** A pass-through proxy to `port` that keeps the headers of every request it forwarded. */
async function recordingProxy (port: number): Promise<{ url: string, seen: IncomingHttpHeaders[] }> {
  const seen: IncomingHttpHeaders[] = []
  const server = createServer((request, response) => {
    seen.push(request.headers)
    const chunks: Buffer[] = []
    request.on('data', (chunk: Buffer) => chunks.push(chunk))
    request.on('end', () => {
      const headers = Object.fromEntries(Object.entries(request.headers).filter(([name]) => !['host', 'connection', 'content-length'].includes(name))) as Record<string, string>
      fetch(`http://127.0.0.1:${port}${request.url!}`, { method: request.method, headers, ...(chunks.length === 0 ? {} : { body: Buffer.concat(chunks) }) }).then(async answer => {
        response.writeHead(answer.status, Object.fromEntries(answer.headers))
        if (answer.body !== null) for await (const chunk of answer.body) response.write(chunk)
        response.end()
      }).catch(() => { response.destroy() })
    })
  })
  servers.push(server)
  await new Promise<void>(resolve => server.listen(0, '127.0.0.1', resolve))
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, seen }
}

const alice = { 'x-api-key': KEYS.alice }

describe('remote upstreams', { timeout: SLOW.PROCESS_MS }, () => {
  it('speaks both eras as a client: server-everything (2025-11-25) and a 2026-07-28-only server, side by side', async () => {
    const everything = await startServer([EVERYTHING, 'streamableHttp'], { PORT: String(await freePort()) })
    const modern = await startServer([new URL('../fixtures/mcp-upstream/modern.mjs', import.meta.url).pathname])
    const config = loadConfig({}, {
      apiKeys: API_KEYS,
      upstreamsFile: upstreamsFile({ mcpServers: { everything: { url: `http://127.0.0.1:${everything.port}/mcp` }, modern: { type: 'http', url: `http://127.0.0.1:${modern.port}/mcp` } } }),
    })
    const app = await buildApp({ config, tools: [] })
    apps.push(app)
    const echo = await app.inject({ method: 'POST', url: '/tools/everything_echo', payload: { message: 'over http' }, headers: alice })
    expect(echo.json()).toEqual({ content: [{ type: 'text', text: 'Echo: over http' }] })
    const shout = await app.inject({ method: 'POST', url: '/tools/modern_shout', payload: { text: 'hi' }, headers: alice })
    expect(shout.json()).toEqual({ loud: 'HI' })
    const status = (await app.inject({ method: 'GET', url: '/upstreams', headers: alice })).json<{ upstreams: Array<{ name: string, protocolVersion?: string }> }>().upstreams
    expect(Object.fromEntries(status.map(s => [s.name, s.protocolVersion]))).toEqual({ everything: '2025-11-25', modern: '2026-07-28' })

    // The remote goes away: its tools stay listed and answer 503, then it is reconnected.
    everything.child.kill('SIGKILL')
    await eventually(async () => (await app.inject({ method: 'POST', url: '/tools/everything_echo', payload: { message: 'x' }, headers: alice })).statusCode === 503, 'calls answer 503')
    const down = await app.inject({ method: 'POST', url: '/tools/everything_echo', payload: { message: 'x' }, headers: alice })
    expect(down.json()).toMatchObject({ code: 'TOOLGATE_UPSTREAM_UNAVAILABLE' })
    expect(down.headers['retry-after']).toBeDefined()
    expect((await app.inject({ method: 'POST', url: '/tools/modern_shout', payload: { text: 'still' }, headers: alice })).statusCode).toBe(200)
    await startServer([EVERYTHING, 'streamableHttp'], { PORT: String(everything.port) })
    await eventually(async () => (await app.inject({ method: 'POST', url: '/tools/everything_echo', payload: { message: 'back' }, headers: alice })).statusCode === 200, 'it is reconnected', 30_000)
  })

  it('sends the file\'s credentials and never the caller\'s; neither reaches callers, logs, documents or audit lines', async () => {
    const modern = await startServer([new URL('../fixtures/mcp-upstream/modern.mjs', import.meta.url).pathname])
    const proxy = await recordingProxy(modern.port)
    const secret = 'upstream-token-5f1c2e9a7b'
    process.env.TOOLGATE_TEST_UPSTREAM_TOKEN = secret
    const lines: string[] = []
    const stream = new Writable({ write (chunk, _encoding, done) { lines.push(String(chunk)); done() } })
    const auditLog = `${tempDir()}/audit.jsonl`
    const config = loadConfig({}, {
      apiKeys: API_KEYS, auditLog, logLevel: 'debug',
      upstreamsFile: upstreamsFile({ mcpServers: { modern: { url: `${proxy.url}/mcp`, headers: { Authorization: 'Bearer ${TOOLGATE_TEST_UPSTREAM_TOKEN}' } } } }),
    })
    const app = await buildApp({ config, tools: [], logger: { level: 'debug', stream } })
    apps.push(app)
    const called = await app.inject({ method: 'POST', url: '/tools/modern_shout', payload: { text: 'hi' }, headers: { ...alice, 'x-caller-secret': 'not-for-upstreams', cookie: 'session=mine' } })
    expect(called.statusCode).toBe(200)
    expect(proxy.seen.length).toBeGreaterThan(0)
    for (const headers of proxy.seen) {
      expect(headers.authorization).toBe(`Bearer ${secret}`)
      expect(headers['x-api-key']).toBeUndefined()
      expect(headers.cookie).toBeUndefined()
      expect(headers['x-caller-secret']).toBeUndefined()
    }
    const everywhere = [
      called.body,
      (await app.inject({ method: 'GET', url: '/tools', headers: alice })).body,
      (await app.inject({ method: 'GET', url: '/openapi.json', headers: alice })).body,
      (await app.inject({ method: 'GET', url: '/upstreams', headers: alice })).body,
      (await app.inject({ method: 'GET', url: '/metrics' })).body,
    ]
    await app.close()
    everywhere.push(lines.join(''), (await import('node:fs')).readFileSync(auditLog, 'utf8'))
    for (const text of everywhere) expect(text).not.toContain(secret)
    expect(lines.join('')).toContain('upstream connected')
    delete process.env.TOOLGATE_TEST_UPSTREAM_TOKEN
  })

  it('a server that refuses its credentials shows why in /upstreams, with the secret taken out', async () => {
    const secret = 'tok-in-the-url-0123456789'
    const closed = await freePort()
    const config = loadConfig({}, { apiKeys: API_KEYS, upstreamsFile: upstreamsFile({ mcpServers: { gone: { url: `http://127.0.0.1:${closed}/mcp?key=${secret}` } } }) })
    const app = await buildApp({ config, tools: [] })
    apps.push(app)
    const status = (await app.inject({ method: 'GET', url: '/upstreams', headers: alice })).json<{ upstreams: Array<{ state: string, lastError?: string }> }>().upstreams[0]!
    expect(status.state).toBe('down')
    expect(status.lastError).toBeDefined()
    expect(JSON.stringify(status)).not.toContain(secret)
  })

  it('sends the call\'s W3C trace context to the upstream in _meta', async () => {
    const receiver = await OtlpReceiver.start()
    const tracing = (await tracingFromEnv({ OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url, OTEL_EXPORTER_OTLP_PROTOCOL: 'http/json', OTEL_TRACES_SAMPLER: 'always_on' }))!
    const dir = tempDir()
    const config = loadConfig({}, { apiKeys: API_KEYS, upstreamsFile: upstreamsFile({ mcpServers: { up: fixture(dir) } }) })
    const app = await buildApp({ config, tools: [], tracing })
    apps.push(app)
    const traceId = '4bf92f3577b34da6a3ce929d0e0e4736'
    const response = await app.inject({ method: 'POST', url: '/tools/up_meta', payload: {}, headers: { ...alice, traceparent: `00-${traceId}-00f067aa0ba902b7-01` } })
    const meta = JSON.parse(response.json<{ content: Array<{ text: string }> }>().content[0]!.text) as { traceparent?: string }
    expect(meta.traceparent).toMatch(new RegExp(`^00-${traceId}-[0-9a-f]{16}-01$`))
    await app.close()
    await tracing.shutdown()
    await receiver.close()
  })
})
