import { writeFileSync } from 'node:fs'
import { createServer, type IncomingHttpHeaders, type Server, type ServerResponse } from 'node:http'
import type { AddressInfo } from 'node:net'
import { join } from 'node:path'
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest'
import type { FastifyInstance } from 'fastify'
import { buildApp } from '../../plugins/app.js'
import { loadConfig } from '../../src/services/config.js'
import { API_KEYS, KEYS } from '../approvals/helpers.js'
import { SLOW } from '../slow.js'
import { tracingFromEnv } from '../../src/services/tracing/setup.js'
import { OtlpReceiver } from '../tracing/otlp-receiver.js'
import { freePort, tempDir, upstreamsFile } from './helpers.js'

/*
 * What a service can do wrong, and what a caller can try: a recording HTTP service of the
 * test's own behind a small document. Every request it receives is kept as it arrived
 * (request line and headers), so what the gateway sent is read off the wire.
 */

const SERVICE_SECRET = 'svc-secret-0123456789'

const DOCUMENT = {
  openapi: '3.0.3',
  info: { title: 'faults', version: '1' },
  paths: {
    '/items/{id}': {
      get: {
        operationId: 'getItem',
        parameters: [
          { name: 'id', in: 'path', required: true, schema: { type: 'string' } },
          { name: 'q', in: 'query', schema: { type: 'string' } },
          { name: 'X-Tag', in: 'header', schema: { type: 'string' } },
          { name: 'Authorization', in: 'header', schema: { type: 'string' } },
        ],
        responses: { 200: { description: 'ok', content: { 'application/json': { schema: { $ref: '#/components/schemas/Item' } } } }, 404: { description: 'none' } },
      },
    },
    '/items': {
      post: {
        operationId: 'createItem',
        requestBody: { required: true, content: { 'application/json': { schema: { $ref: '#/components/schemas/Item' } } } },
        responses: { 201: { description: 'made', content: { 'application/json': { schema: { $ref: '#/components/schemas/Item' } } } } },
      },
    },
    '/fault/{kind}': {
      get: {
        operationId: 'readFault',
        parameters: [{ name: 'kind', in: 'path', required: true, schema: { type: 'string' } }],
        responses: { 200: { description: 'ok', content: { 'application/json': { schema: { $ref: '#/components/schemas/Item' } } } } },
      },
      post: {
        operationId: 'writeFault',
        parameters: [{ name: 'kind', in: 'path', required: true, schema: { type: 'string' } }],
        responses: { 200: { description: 'ok', content: { 'application/json': { schema: { $ref: '#/components/schemas/Item' } } } }, 405: { description: 'Not this way.' }, 415: { description: 'Not that type.' }, 423: { description: 'The item is locked.' } },
      },
    },
  },
  components: {
    schemas: {
      Item: { type: 'object', required: ['name'], properties: { name: { type: 'string' }, parent: { $ref: '#/components/schemas/Item' }, note: { type: 'string', nullable: true } } },
    },
  },
}

interface Seen { readonly method: string, readonly url: string, readonly headers: IncomingHttpHeaders, readonly body: string }

const seen: Seen[] = []
let service: Server
let serviceUrl: string
let other: Server
let otherUrl: string
const apps: FastifyInstance[] = []
const alice = { 'x-api-key': KEYS.alice }

function answer (response: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}): void {
  response.writeHead(status, { 'content-type': 'application/json', ...headers })
  response.end(JSON.stringify(body))
}

beforeAll(async () => {
  service = createServer((request, response) => {
    const chunks: Buffer[] = []
    request.on('data', (chunk: Buffer) => chunks.push(chunk))
    request.on('end', () => {
      seen.push({ method: request.method!, url: request.url!, headers: request.headers, body: Buffer.concat(chunks).toString() })
      const kind = /^\/fault\/([^/?]+)/.exec(request.url!)?.[1]
      if (request.url === '/openapi.json') return answer(response, 200, DOCUMENT)
      if (kind === undefined) {
        if (request.url!.startsWith('/items/missing')) return answer(response, 404, { error: `no such item; your key was ${String(request.headers['x-service-key'])}` })
        return answer(response, request.method === 'POST' ? 201 : 200, { name: 'item' })
      }
      switch (kind) {
        case 'boom': return answer(response, 500, { error: 'stack trace: at secret.js:1' })
        case 'busy': return answer(response, 503, { error: 'busy' }, { 'retry-after': '7' })
        case 'slow-down': return answer(response, 429, { error: 'slow down' }, { 'retry-after': '3' })
        case 'hang': return undefined
        case 'locked': return answer(response, 423, { error: 'locked' })
        case 'teapot': return answer(response, 418, { error: 'a teapot' })
        case 'method': return answer(response, 405, { error: 'not this way' }, { allow: 'GET' })
        case 'deep': {
          response.writeHead(200, { 'content-type': 'application/json' })
          return response.end('{"name":"x","parent":'.repeat(20_000) + '{"name":"y"}' + '}'.repeat(20_000))
        }
        case 'media': return answer(response, 415, { error: 'not that type' })
        case 'close': return request.socket.destroy()
        case 'big': return answer(response, 200, { name: 'x'.repeat(300_000) })
        case 'off': return answer(response, 200, { nome: 'misspelt' })
        case 'text': {
          response.writeHead(200, { 'content-type': 'application/json' })
          return response.end('not json at all')
        }
        case 'away': {
          response.writeHead(302, { location: `${otherUrl}/steal` })
          return response.end()
        }
        case 'here': {
          response.writeHead(302, { location: '/items/moved' })
          return response.end()
        }
        default: return answer(response, 400, { error: 'unknown fault' })
      }
    })
  })
  await new Promise<void>(resolve => service.listen(0, '127.0.0.1', resolve))
  serviceUrl = `http://127.0.0.1:${(service.address() as AddressInfo).port}`
  other = createServer((request, response) => {
    seen.push({ method: request.method!, url: `OTHER ${request.url!}`, headers: request.headers, body: '' })
    answer(response, 200, { name: 'stolen' })
  })
  await new Promise<void>(resolve => other.listen(0, '127.0.0.1', resolve))
  otherUrl = `http://127.0.0.1:${(other.address() as AddressInfo).port}`
  process.env.TOOLGATE_TEST_SERVICE_SECRET = SERVICE_SECRET
})

afterEach(async () => {
  await Promise.all(apps.splice(0).map(async app => { await app.close() }))
})

afterAll(async () => {
  delete process.env.TOOLGATE_TEST_SERVICE_SECRET
  service.closeAllConnections()
  other.closeAllConnections()
  await Promise.all([service, other].map(async server => { await new Promise(resolve => server.close(resolve)) }))
})

/** A document file in a temp folder. */
function documentFile (document: unknown = DOCUMENT): string {
  const path = join(tempDir(), 'faults.json')
  writeFileSync(path, JSON.stringify(document))
  return path
}

async function gateway (extra: Record<string, unknown> = {}, tools: Record<string, unknown> = {}, baseUrl = serviceUrl, maxResponseBytes = 100_000): Promise<FastifyInstance> {
  const file = upstreamsFile({
    openapi: { svc: { document: documentFile(), baseUrl, headers: { 'X-Service-Key': '${TOOLGATE_TEST_SERVICE_SECRET}' }, ...extra } },
    tools,
  })
  const app = await buildApp({ config: loadConfig({}, { apiKeys: API_KEYS, upstreamsFile: file, maxResponseBytes }), tools: [] })
  apps.push(app)
  return app
}

const call = async (app: FastifyInstance, tool: string, body: unknown, headers: Record<string, string> = {}) =>
  await app.inject({ method: 'POST', url: `/tools/${tool}`, payload: body as object, headers: { ...alice, ...headers } })

/** What the service received since `from`. */
const since = (from: number): Seen[] => seen.slice(from)

describe('what a caller can put in each parameter', { timeout: SLOW.PROCESS_MS }, () => {
  it('keeps a path value inside its segment, whatever it holds', async () => {
    const app = await gateway()
    const attempts = ['../admin', 'a/b', '%2F..%2Fadmin', 'x?admin=1', 'x#frag', 'http://evil.example/', '\\..\\admin', ' ;,']
    for (const id of attempts) {
      const from = seen.length
      const response = await call(app, 'svc_get_item', { id })
      expect(response.statusCode, `${id}: ${response.body}`).toBe(200)
      const [got] = since(from)
      expect(got!.url).toBe(`/items/${encodeURIComponent(id).replace(/[!'()*]/g, c => `%${c.charCodeAt(0).toString(16).toUpperCase()}`)}`)
      expect(got!.url.split('/')).toHaveLength(3)
      expect(got!.url).not.toMatch(/[?#]/)
    }
  })

  it('refuses a path value that is empty or a dot segment, before anything is sent', async () => {
    const app = await gateway()
    const from = seen.length
    for (const id of ['', '.', '..']) {
      const response = await call(app, 'svc_get_item', { id })
      expect(response.statusCode).toBe(400)
      expect(response.json().errors[0].pointer).toBe('/id')
    }
    expect(since(from)).toHaveLength(0)
  })

  it('encodes a query value, so it cannot add parameters', async () => {
    const app = await gateway()
    const from = seen.length
    await call(app, 'svc_get_item', { id: 'a', q: 'x&admin=true#y' })
    expect(since(from)[0]!.url).toBe('/items/a?q=x%26admin%3Dtrue%23y')
  })

  it('refuses header values with line breaks, and sends no header the document does not declare', async () => {
    const app = await gateway()
    const from = seen.length
    const split = await call(app, 'svc_get_item', { id: 'a', 'X-Tag': 'x\r\nX-Admin: yes' })
    expect(split.statusCode).toBe(400)
    const unknown = await call(app, 'svc_get_item', { id: 'a', 'X-Admin': 'yes' })
    expect(unknown.statusCode).toBe(400)
    // Authorization is the gateway's (the OpenAPI rule): no parameter, so no property either.
    const auth = await call(app, 'svc_get_item', { id: 'a', Authorization: 'Bearer mine' })
    expect(auth.statusCode).toBe(400)
    expect(since(from)).toHaveLength(0)
    const tagged = await call(app, 'svc_get_item', { id: 'a', 'X-Tag': 'blue' })
    expect(tagged.statusCode).toBe(200)
    expect(since(from)[0]!.headers['x-tag']).toBe('blue')
  })

  it('never forwards the caller\'s credentials or cookies, and sends the service\'s own', async () => {
    const app = await gateway()
    const from = seen.length
    const response = await app.inject({ method: 'POST', url: '/tools/svc_get_item', payload: { id: 'a' }, headers: { authorization: `Bearer ${KEYS.alice}`, cookie: 'session=caller', 'x-forwarded-for': '10.0.0.1' } })
    expect(response.statusCode).toBe(200)
    const { headers } = since(from)[0]!
    expect(headers['x-service-key']).toBe(SERVICE_SECRET)
    expect(headers.authorization).toBeUndefined()
    expect(headers['x-api-key']).toBeUndefined()
    expect(headers.cookie).toBeUndefined()
    expect(headers['x-forwarded-for']).toBeUndefined()
    expect(headers.host).toBe(new URL(serviceUrl).host)
  })

  it('keeps the service\'s credential out of a 4xx body it echoes, the dry run and the listing', async () => {
    const app = await gateway()
    const missing = await call(app, 'svc_get_item', { id: 'missing' })
    expect(missing.statusCode).toBe(404)
    expect(missing.json()).toMatchObject({ code: 'UPSTREAM_404', upstreamStatus: 404 })
    expect(missing.body).not.toContain(SERVICE_SECRET)
    expect(missing.body).toContain('[redacted]')
    const dry = await app.inject({ method: 'POST', url: '/tools/svc_get_item?dryRun=true', payload: { id: 'a' }, headers: alice })
    expect(dry.json()).toMatchObject({ method: 'GET', url: `${serviceUrl}/items/a`, headers: { 'X-Service-Key': '[redacted]' } })
    for (const path of ['/tools', '/upstreams', '/openapi.json']) {
      expect((await app.inject({ method: 'GET', url: path, headers: alice })).body).not.toContain(SERVICE_SECRET)
    }
  })
})

describe('what a service can do wrong', { timeout: SLOW.PROCESS_MS }, () => {
  it('a 500 is a 502 with a generic detail: the service\'s answer stays in the log', async () => {
    const app = await gateway()
    const response = await call(app, 'svc_read_fault', { kind: 'boom' })
    expect(response.statusCode).toBe(502)
    expect(response.json().code).toBe('TOOLGATE_UPSTREAM_FAILED')
    expect(response.body).not.toContain('stack trace')
  })

  it('a 503 is a 503 with the service\'s Retry-After; a 429 keeps its status and Retry-After', async () => {
    const app = await gateway()
    const busy = await call(app, 'svc_read_fault', { kind: 'busy' })
    expect(busy.statusCode).toBe(503)
    expect(busy.headers['retry-after']).toBe('7')
    const slow = await call(app, 'svc_read_fault', { kind: 'slow-down' })
    expect(slow.statusCode).toBe(429)
    expect(slow.headers['retry-after']).toBe('3')
  })

  it('a 4xx its document declares keeps its status, documented on the operation; one no document has is a 502', async () => {
    const app = await gateway()
    const locked = await call(app, 'svc_write_fault', { kind: 'locked' })
    expect(locked.statusCode).toBe(423)
    expect(locked.json()).toMatchObject({ code: 'UPSTREAM_423', upstreamBody: { error: 'locked' } })
    const operation = (app.openapiDocument() as { paths: Record<string, { post: { responses: Record<string, { description: string }> } }> }).paths['/tools/svc_write_fault']!.post
    expect(operation.responses['423']!.description).toContain('UPSTREAM_423')
    expect((app.openapiDocument() as { paths: Record<string, { post: { responses: Record<string, unknown> } }> }).paths['/tools/svc_read_fault']!.post.responses['423']).toBeUndefined()
    const teapot = await call(app, 'svc_write_fault', { kind: 'teapot' })
    expect(teapot.statusCode).toBe(502)
    expect(teapot.json().code).toBe('TOOLGATE_UPSTREAM_FAILED')
  })

  it('a 4xx about the request the gateway built (405, 415), even one its document declares, is a 502 with upstreamStatus, never the route\'s own', async () => {
    const app = await gateway()
    for (const [kind, status] of [['method', 405], ['media', 415]] as const) {
      const refused = await call(app, 'svc_write_fault', { kind })
      expect(refused.statusCode).toBe(502)
      expect(refused.json()).toMatchObject({ code: 'TOOLGATE_UPSTREAM_FAILED', upstreamStatus: status, upstream: 'svc' })
      expect(refused.headers.allow).toBeUndefined()
    }
    // Only what passes through is documented as the service's own answer.
    const responses = (app.openapiDocument() as { paths: Record<string, { post: { responses: Record<string, { description: string }> } }> }).paths['/tools/svc_write_fault']!.post.responses
    expect(responses['405']!.description).not.toContain('UPSTREAM_405')
    expect(responses['415']!.description).not.toContain('UPSTREAM_415')
  })

  it('an answer nested deeper than any input may be is the service\'s failure (502), not the gateway\'s stack', async () => {
    const app = await gateway({}, {}, serviceUrl, 1_000_000)
    const deep = await call(app, 'svc_read_fault', { kind: 'deep' })
    expect(deep.statusCode, deep.body).toBe(502)
    expect(deep.json()).toMatchObject({ code: 'TOOLGATE_UPSTREAM_FAILED', detail: 'service "svc" answered JSON that nests deeper than 1000 levels' })
  })

  it('a service that hangs: 504 at the tool\'s timeout, and the connection is closed under it', async () => {
    const app = await gateway({}, { svc_read_fault: { timeoutMs: 300 } })
    const closed = new Promise<void>(resolve => { service.once('request', request => { request.socket.once('close', () => { resolve() }) }) })
    const response = await call(app, 'svc_read_fault', { kind: 'hang' })
    expect(response.statusCode).toBe(504)
    await closed
  })

  it('a caller that goes away cancels the call: the service\'s connection is closed under it', async () => {
    const app = await gateway()
    const url = await app.listen({ host: '127.0.0.1', port: 0 })
    const closed = new Promise<void>(resolve => { service.once('request', request => { request.socket.once('close', () => { resolve() }) }) })
    const caller = new AbortController()
    const sent = fetch(`${url}/tools/svc_read_fault`, { method: 'POST', headers: { ...alice, 'content-type': 'application/json' }, body: JSON.stringify({ kind: 'hang' }), signal: caller.signal }).catch(() => undefined)
    await new Promise(resolve => setTimeout(resolve, 200))
    caller.abort()
    await sent
    await closed
  })

  it('sends the call\'s W3C trace context to the service', async () => {
    const receiver = await OtlpReceiver.start()
    const tracing = (await tracingFromEnv({ OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url, OTEL_EXPORTER_OTLP_PROTOCOL: 'http/json', OTEL_TRACES_SAMPLER: 'always_on' }))!
    const file = upstreamsFile({ openapi: { svc: { document: documentFile(), baseUrl: serviceUrl } } })
    const app = await buildApp({ config: loadConfig({}, { apiKeys: API_KEYS, upstreamsFile: file }), tools: [], tracing })
    const from = seen.length
    const traceId = '4bf92f3577b34da6a3ce929d0e0e4736'
    await call(app, 'svc_get_item', { id: 'a' }, { traceparent: `00-${traceId}-00f067aa0ba902b7-01` })
    expect(since(from)[0]!.headers.traceparent).toMatch(new RegExp(`^00-${traceId}-[0-9a-f]{16}-01$`))
    await app.close()
    await tracing.shutdown()
    await receiver.close()
  })

  it('a connection closed mid-call: a read-only call is sent once more, any other never twice (outcome unknown)', async () => {
    const app = await gateway()
    let from = seen.length
    const read = await call(app, 'svc_read_fault', { kind: 'close' })
    expect(read.statusCode).toBe(502)
    expect(since(from)).toHaveLength(2)
    from = seen.length
    const write = await call(app, 'svc_write_fault', { kind: 'close' })
    expect(write.statusCode).toBe(502)
    expect(write.json()).toMatchObject({ code: 'TOOLGATE_UPSTREAM_FAILED', outcome: 'unknown' })
    expect(since(from)).toHaveLength(1)
  })

  it('an oversized, unparsable or off-schema answer is a 502', async () => {
    const app = await gateway()
    expect((await call(app, 'svc_read_fault', { kind: 'big' })).statusCode).toBe(502)
    expect((await call(app, 'svc_read_fault', { kind: 'text' })).json().code).toBe('TOOLGATE_UPSTREAM_FAILED')
    const off = await call(app, 'svc_read_fault', { kind: 'off' })
    expect(off.statusCode).toBe(502)
    expect(off.json().code).toBe('TOOLGATE_INVALID_OUTPUT')
  })

  it('follows a redirect within the service\'s origin only', async () => {
    const app = await gateway()
    const from = seen.length
    const here = await call(app, 'svc_read_fault', { kind: 'here' })
    expect(here.statusCode).toBe(200)
    const away = await call(app, 'svc_read_fault', { kind: 'away' })
    expect(away.statusCode).toBe(502)
    expect(since(from).some(request => request.url.startsWith('OTHER'))).toBe(false)
  })

  it('a service down at start-up: the gateway starts, its calls answer 503 with Retry-After, a read-only one tried twice', async () => {
    const app = await gateway({}, {}, `http://127.0.0.1:${await freePort()}`)
    const response = await call(app, 'svc_get_item', { id: 'a' })
    expect(response.statusCode).toBe(503)
    expect(response.json().code).toBe('TOOLGATE_UPSTREAM_UNAVAILABLE')
    expect(response.headers['retry-after']).toBeDefined()
  })

  it('holds calls in flight to maxInFlight, queues maxQueue, refuses the rest with 429', async () => {
    const app = await gateway({ maxInFlight: 1, maxQueue: 0 }, { svc_read_fault: { timeoutMs: 500 } })
    const [first, second] = await Promise.all([call(app, 'svc_read_fault', { kind: 'hang' }), call(app, 'svc_read_fault', { kind: 'hang' })])
    expect([first!.statusCode, second!.statusCode].sort()).toEqual([429, 504])
  })

  it('a keyed write reaches the service once, however often it is sent', async () => {
    const app = await gateway()
    const from = seen.length
    const key = { 'idempotency-key': 'order-1' }
    const once = await call(app, 'svc_create_item', { body: { name: 'a', parent: { name: 'b' } } }, key)
    const again = await call(app, 'svc_create_item', { body: { name: 'a', parent: { name: 'b' } } }, key)
    expect(once.statusCode).toBe(200)
    expect(again.statusCode).toBe(200)
    expect(since(from).filter(request => request.method === 'POST')).toHaveLength(1)
    expect(JSON.parse(since(from)[0]!.body)).toEqual({ name: 'a', parent: { name: 'b' } })
  })
})

describe('documents that change or cannot be read', { timeout: SLOW.PROCESS_MS }, () => {
  it('a document that cannot be read or is no OpenAPI 3 stops start-up, naming the service', async () => {
    const bad = join(tempDir(), 'bad.json')
    writeFileSync(bad, '{ "swagger": "2.0", "info": { "title": "x", "version": "1" }, "paths": {} }')
    for (const document of [join(tempDir(), 'absent.json'), bad]) {
      const file = upstreamsFile({ openapi: { broken: { document, baseUrl: serviceUrl } } })
      await expect(buildApp({ config: loadConfig({}, { apiKeys: API_KEYS, upstreamsFile: file }), tools: [] })).rejects.toThrow(/openapi service "broken"/)
    }
  })

  it('reads a document from a URL, and the service\'s base URL from its servers when the file gives none', async () => {
    const file = upstreamsFile({ openapi: { svc: { document: `${serviceUrl}/openapi.json` } } })
    await expect(buildApp({ config: loadConfig({}, { apiKeys: API_KEYS, upstreamsFile: file }), tools: [] })).rejects.toThrow(/names no absolute server URL; set "baseUrl"/)
    const withServers = join(tempDir(), 'servers.json')
    writeFileSync(withServers, JSON.stringify({ ...DOCUMENT, servers: [{ url: `${serviceUrl}/{stage}`, variables: { stage: { default: 'v1' } } }] }))
    const app = await buildApp({ config: loadConfig({}, { apiKeys: API_KEYS, upstreamsFile: upstreamsFile({ openapi: { svc: { document: withServers } } }) }), tools: [] })
    apps.push(app)
    const from = seen.length
    expect((await call(app, 'svc_get_item', { id: 'a' })).statusCode).toBe(200)
    expect(since(from)[0]!.url).toBe('/v1/items/a')
    const byUrl = await buildApp({ config: loadConfig({}, { apiKeys: API_KEYS, upstreamsFile: upstreamsFile({ openapi: { svc: { document: `${serviceUrl}/openapi.json`, baseUrl: serviceUrl } } }) }), tools: [] })
    apps.push(byUrl)
    expect(byUrl.catalog.current.tools.map(tool => tool.id)).toContain('svc_create_item')
  })

  it('reads a YAML document', async () => {
    const path = join(tempDir(), 'items.yaml')
    writeFileSync(path, [
      'openapi: 3.0.3',
      'info: { title: yaml, version: "1" }',
      'paths:',
      '  /items/{id}:',
      '    get:',
      '      operationId: getItem',
      '      parameters:',
      '        - { name: id, in: path, required: true, schema: { type: string } }',
      '      responses:',
      '        "200": { description: ok, content: { application/json: { schema: { type: object } } } }',
      '',
    ].join('\n'))
    const app = await buildApp({ config: loadConfig({}, { apiKeys: API_KEYS, upstreamsFile: upstreamsFile({ openapi: { yml: { document: path, baseUrl: serviceUrl } } }) }), tools: [] })
    apps.push(app)
    expect((await call(app, 'yml_get_item', { id: 'a' })).json()).toEqual({ name: 'item' })
  })

  it('a reload reads the document again; one that cannot be read keeps the serving catalog', async () => {
    const path = documentFile()
    const file = upstreamsFile({ openapi: { svc: { document: path, baseUrl: serviceUrl } } })
    const app = await buildApp({ config: loadConfig({}, { apiKeys: API_KEYS, upstreamsFile: file }), tools: [] })
    apps.push(app)
    const { paths, ...rest } = DOCUMENT
    writeFileSync(path, JSON.stringify({ ...rest, paths: { '/items/{id}': paths['/items/{id}'] } }))
    const replaced = await app.reloadTools()
    expect([...replaced.removed].sort()).toEqual(['svc_create_item', 'svc_read_fault', 'svc_write_fault'])
    writeFileSync(path, '{ not json')
    await expect(app.reloadTools()).rejects.toThrow(/openapi service "svc"/)
    expect(app.catalog.current.tools.map(tool => tool.id)).toEqual(['svc_get_item'])
    expect((await call(app, 'svc_get_item', { id: 'a' })).statusCode).toBe(200)
  })
})
