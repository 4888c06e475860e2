import { createServer, type IncomingMessage, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import shipped, { createUrlFetchTool, type UrlFetchOptions } from '../../tools/url-fetch.js'
import { expectFailure, harness } from './app.js'

// Every connection in this file goes to a server on 127.0.0.1: there is no internet here, and a
// test must never reach one. Public addresses appear only in injected DNS answers that the
// guard refuses before any connection is made.

let server: Server
let origin: string
let port: number
const seen: IncomingMessage[] = []
let open = 0
let maxOpen = 0
const closedHangs: string[] = []

beforeAll(async () => {
  server = createServer((req, res) => {
    seen.push(req)
    const path = new URL(req.url ?? '/', 'http://x').pathname
    if (path === '/text') { res.setHeader('content-type', 'text/plain; charset=utf-8'); res.setHeader('x-secret', 'nope'); res.end(`hello from ${req.headers.host}`); return }
    if (path === '/big') { res.setHeader('content-type', 'text/plain'); res.end('x'.repeat(100_000)); return }
    if (path === '/redirect') { res.writeHead(302, { location: 'http://169.254.169.254/latest/meta-data' }); res.end(); return }
    if (path === '/binary') { res.setHeader('content-type', 'image/png'); res.end(Buffer.from([0x89, 0x50, 0x4e, 0x47, 0, 255])); return }
    if (path === '/hang') { req.socket.on('close', () => closedHangs.push(path)); return }
    if (path === '/slow') {
      open++; maxOpen = Math.max(maxOpen, open)
      // Long enough for the four let through to all arrive before the first ends, on a busy machine too.
      setTimeout(() => { open--; res.end('done') }, 500)
      return
    }
    res.writeHead(404).end()
  })
  await new Promise<void>(resolve => server.listen(0, '127.0.0.1', resolve))
  port = (server.address() as AddressInfo).port
  origin = `http://127.0.0.1:${port}`
})

afterAll(async () => {
  server.closeAllConnections()
  await new Promise(resolve => server.close(resolve))
})

/** A fetcher that may reach the local test server (and only loopback: the guard stays on for the rest). */
function local (options: UrlFetchOptions = {}) {
  return harness([createUrlFetchTool({ allowedHosts: ['127.0.0.1', 'pinned.test'], allowLoopback: true, lookup: async () => [{ address: '127.0.0.1', family: 4 }], ...options })])
}

function countRequests (): number { return seen.length }

describe('url_fetch refuses', () => {
  it('everything when the allowlist is empty (the default): 403 HOST_NOT_ALLOWED', async () => {
    const error = await expectFailure(harness([createUrlFetchTool()]).call('url_fetch', { url: `${origin}/text` }), 403, 'HOST_NOT_ALLOWED')
    expect(error.message).toMatch(/FETCH_ALLOWED_HOSTS/)
  })

  it('a host not on the allowlist, before resolving or connecting', async () => {
    let lookups = 0
    const h = harness([createUrlFetchTool({ allowedHosts: ['example.com'], lookup: async () => { lookups++; return [] } })])
    await expectFailure(h.call('url_fetch', { url: 'https://example.org/' }), 403, 'HOST_NOT_ALLOWED')
    expect(lookups).toBe(0)
  })

  it.each([
    ['the loopback IP', () => `${origin}/text`],
    ['IPv6 loopback', () => `http://[::1]:${port}/text`],
    ['IPv4-mapped loopback', () => `http://[::ffff:127.0.0.1]:${port}/text`],
    ['a name resolving to loopback', () => `http://localhost:${port}/text`],
  ])('%s, even when allowlisted: 403 ADDRESS_FORBIDDEN, no request sent', async (_name, url) => {
    const before = countRequests()
    // `localhost` answers as the system resolver would, without asking it.
    const lookup = async () => [{ address: '::1', family: 6 }, { address: '127.0.0.1', family: 4 }]
    const h = harness([createUrlFetchTool({ allowedHosts: ['127.0.0.1', '[::1]', '[::ffff:7f00:1]', 'localhost'], lookup })])
    const error = await expectFailure(h.call('url_fetch', { url: url() }), 403, 'ADDRESS_FORBIDDEN')
    expect(error.message).toMatch(/loopback/)
    expect(countRequests()).toBe(before)
  })

  it('a host if any one of its addresses is private (checked before connecting)', async () => {
    const h = harness([createUrlFetchTool({
      allowedHosts: ['mixed.test'],
      lookup: async () => [{ address: '93.184.216.34', family: 4 }, { address: '10.0.0.7', family: 4 }],
    })])
    const error = await expectFailure(h.call('url_fetch', { url: 'http://mixed.test/' }), 403, 'ADDRESS_FORBIDDEN')
    expect(error.message).toMatch(/10\.0\.0\.7.*private/)
  })

  it.each(['169.254.169.254', '100.64.0.1', 'fd00::1', 'fe80::1', '::ffff:192.168.0.1', '0.0.0.0', '224.0.0.1'])('a name resolving to %s', async address => {
    const h = harness([createUrlFetchTool({ allowedHosts: ['evil.test'], lookup: async () => [{ address, family: address.includes(':') ? 6 : 4 }] })])
    await expectFailure(h.call('url_fetch', { url: 'http://evil.test/' }), 403, 'ADDRESS_FORBIDDEN')
  })

  it('non-http schemes and URLs with credentials, by schema', async () => {
    const h = local()
    for (const url of ['file:///etc/passwd', 'ftp://127.0.0.1/', 'gopher://127.0.0.1/', `http://user:pw@127.0.0.1:${port}/`, '/relative', 'not a url']) {
      await expectFailure(h.call('url_fetch', { url }), 400, 'TOOLGATE_INVALID_INPUT')
    }
  })

  it('a name that does not resolve: 502 HOST_UNRESOLVED', async () => {
    const lookup = async (): Promise<never> => { throw Object.assign(new Error('nope'), { code: 'ENOTFOUND' }) }
    await expectFailure(local({ lookup }).call('url_fetch', { url: 'http://pinned.test/' }), 502, 'HOST_UNRESOLVED')
  })

  it('a refused connection: 502 FETCH_FAILED', async () => {
    const closed = createServer()
    await new Promise<void>(resolve => closed.listen(0, '127.0.0.1', resolve))
    const deadPort = (closed.address() as AddressInfo).port
    await new Promise(resolve => closed.close(resolve))
    const error = await expectFailure(local().call('url_fetch', { url: `http://127.0.0.1:${deadPort}/` }), 502, 'FETCH_FAILED')
    expect(error.message).toMatch(/ECONNREFUSED/)
  })
})

describe('url_fetch fetches (local server, loopback opened for the test)', () => {
  it('a text page, with selected headers and the address connected to', async () => {
    const { value, record } = await local().call('url_fetch', { url: `${origin}/text` })
    const body = `hello from 127.0.0.1:${port}`
    expect(value).toEqual({
      url: `${origin}/text`, status: 200, encoding: 'utf8', body, bytes: Buffer.byteLength(body), truncated: false, address: '127.0.0.1',
      headers: expect.objectContaining({ 'content-type': 'text/plain; charset=utf-8' }),
    })
    expect((value as { headers: Record<string, string> }).headers).not.toHaveProperty('x-secret')
    expect(record.debugSteps).toEqual([
      { name: 'connect', data: { address: '127.0.0.1' } },
      { name: 'response', data: { status: 200, bytes: Buffer.byteLength(body), truncated: false } },
    ])
    expect(record.touchedResources).toEqual([`${origin}/text`])
  })

  it('connects to the vetted address, not to a second DNS answer (the name never resolves for real)', async () => {
    const { value } = await local().call('url_fetch', { url: `http://pinned.test:${port}/text` })
    expect(value).toMatchObject({ status: 200, body: `hello from pinned.test:${port}`, address: '127.0.0.1' })
  })

  it('stops at the size cap and says so', async () => {
    const { value } = await local({ maxBytes: 1_000 }).call('url_fetch', { url: `${origin}/big` })
    expect(value).toMatchObject({ status: 200, bytes: 1_000, truncated: true, body: 'x'.repeat(1_000) })
  })

  it('returns a redirect instead of following it', async () => {
    const { value } = await local().call('url_fetch', { url: `${origin}/redirect` })
    expect(value).toMatchObject({ status: 302, headers: { location: 'http://169.254.169.254/latest/meta-data' }, body: '' })
  })

  it('returns binary bodies as base64', async () => {
    const { value } = await local().call('url_fetch', { url: `${origin}/binary` })
    expect(value).toMatchObject({ encoding: 'base64', body: Buffer.from([0x89, 0x50, 0x4e, 0x47, 0, 255]).toString('base64'), bytes: 6 })
  })

  it('times out (504) and aborts the request through the signal', async () => {
    const error = await expectFailure(local({ timeoutMs: 150 }).call('url_fetch', { url: `${origin}/hang` }), 504, 'TOOLGATE_TIMEOUT')
    expect(error.extensions.outcome).toBeUndefined()
    await expect.poll(() => closedHangs.length).toBe(1)
  })

  it('runs at most 4 fetches of one session at once (selfConcurrency 4)', async () => {
    maxOpen = 0
    const h = local()
    await Promise.all(Array.from({ length: 8 }, () => h.call('url_fetch', { url: `${origin}/slow` })))
    expect(maxOpen).toBe(4)
  })
})

describe('the shipped url_fetch', () => {
  it('is declared external, read-only, self-concurrent 4, with a finite timeout', () => {
    expect(shipped).toMatchObject({ id: 'url_fetch', effects: ['external'], isReadOnly: true, isConcurrencySafe: false, selfConcurrency: 4, timeoutMs: 15_000 })
  })
})
