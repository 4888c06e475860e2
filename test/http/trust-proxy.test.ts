import { mkdtemp, readFile } from 'node:fs/promises'
import { createServer, request as httpRequest, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterEach, describe, expect, it } from 'vitest'
import { loadConfig } from '../../src/services/config.js'
import { AUDIENCE, ISSUER } from '../services/auth/helpers.js'
import { KEYS, testApp } from './helpers.js'
import { listening, send } from './raw-http.js'

/**
 * The gateway behind a real HTTP proxy hop: the proxy listens on 127.0.0.1, is reached by clients
 * bound to 127.0.0.2 and 127.0.0.3, forwards from 127.0.0.1 and adds the usual `X-Forwarded-*`.
 */

const proxies: Server[] = []
afterEach(async () => { await Promise.all(proxies.splice(0).map(proxy => new Promise(resolve => proxy.close(resolve)))) })

/** A forwarding proxy in front of `target`, as nginx's `proxy_add_x_forwarded_for` would set the headers. */
async function proxyTo (target: number): Promise<number> {
  const proxy = createServer((incoming, outgoing) => {
    const forwardedFor = [incoming.headers['x-forwarded-for'], incoming.socket.remoteAddress].filter(Boolean).join(', ')
    const headers = { ...incoming.headers, 'x-forwarded-for': forwardedFor, 'x-forwarded-proto': 'https', 'x-forwarded-host': 'tools.example.test' }
    const upstream = httpRequest({ host: '127.0.0.1', port: target, path: incoming.url, method: incoming.method, headers }, answer => {
      outgoing.writeHead(answer.statusCode!, answer.headers)
      answer.pipe(outgoing)
    })
    upstream.on('error', () => { outgoing.destroy() })
    incoming.pipe(upstream)
  })
  proxies.push(proxy)
  await new Promise<void>(resolve => proxy.listen(0, '127.0.0.1', resolve))
  return (proxy.address() as AddressInfo).port
}

const ATTACKER = '127.0.0.2'
const USER = '127.0.0.3'
const LIMIT = 5
const WRONG = { 'x-api-key': 'guess-0123456789' }

async function exhaustVia (port: number, from: string, headers: Record<string, string> = {}): Promise<void> {
  for (let i = 0; i <= LIMIT; i++) await send(port, from, headers)
  expect((await send(port, from, headers)).status).toBe(429)
}

describe('TRUST_PROXY', () => {
  it.each([['the proxy\'s address', ['127.0.0.1']], ['a CIDR range', ['127.0.0.0/30']], ['a hop count', 1]] as const)(
    'trusting %s, the throttle counts each client behind the proxy on its own address', async (_label, trustProxy) => {
      const proxy = await proxyTo(await listening(await testApp({ authFailureLimit: LIMIT, trustProxy: structuredClone(trustProxy) as never })))
      await exhaustVia(proxy, ATTACKER)
      expect((await send(proxy, USER, WRONG)).status).toBe(401)
      expect((await send(proxy, USER, { 'x-api-key': KEYS.caller })).status).toBe(200)
    })

  it('off (the default), every client behind the proxy is the proxy: failures share one count, valid keys still get in', async () => {
    const proxy = await proxyTo(await listening(await testApp({ authFailureLimit: LIMIT })))
    await exhaustVia(proxy, ATTACKER)
    expect((await send(proxy, USER, WRONG)).status).toBe(429)
    expect((await send(proxy, USER, { 'x-api-key': KEYS.caller })).status).toBe(200)
  })

  it('a client that is not a trusted proxy cannot choose its address with X-Forwarded-For', async () => {
    const direct = await listening(await testApp({ authFailureLimit: LIMIT, trustProxy: ['127.0.0.1'] }))
    // Each forged failure claims another address: all of them are counted on the real one.
    for (let i = 0; i <= LIMIT; i++) await send(direct, ATTACKER, { 'x-forwarded-for': `198.51.100.${i}` })
    expect((await send(direct, ATTACKER, { 'x-forwarded-for': '198.51.100.99' })).status).toBe(429)
    expect((await send(direct, USER, WRONG)).status).toBe(401)
  })

  it('the advertised protected-resource URL is the one the proxy forwards, only when trusted', async () => {
    const jwt = { issuer: ISSUER, audience: AUDIENCE, algorithms: ['HS256' as const], key: 'a-shared-secret-that-is-32-bytes-or-more' }
    const trusted = await proxyTo(await listening(await testApp({ jwt, trustProxy: ['127.0.0.1'] })))
    const metadata = JSON.parse((await send(trusted, USER, {}, '/.well-known/oauth-protected-resource/mcp')).body) as { resource: string }
    expect(metadata.resource).toBe('https://tools.example.test/mcp')
    const challenge = await send(trusted, USER, {}, '/mcp', 'POST', '{}')
    expect(challenge.headers['www-authenticate']).toContain('resource_metadata="https://tools.example.test/.well-known/oauth-protected-resource/mcp"')
    // Untrusted, the forwarded scheme and host are ignored: the Host header the request came with.
    const untrusted = await proxyTo(await listening(await testApp({ jwt })))
    const own = JSON.parse((await send(untrusted, USER, {}, '/.well-known/oauth-protected-resource')).body) as { resource: string }
    expect(own.resource).toBe(`http://127.0.0.1:${untrusted}`)
  })

  it('the audit trail records the client\'s address behind the proxy', async () => {
    const path = join(await mkdtemp(join(tmpdir(), 'toolgate-proxy-')), 'audit.log')
    const app = await testApp({ auditLog: path, trustProxy: ['127.0.0.1'] })
    const proxy = await proxyTo(await listening(app))
    const answer = await send(proxy, USER, { 'x-api-key': KEYS.caller, 'content-type': 'application/json' }, '/tools/slow_write', 'POST', '{"ms":1}')
    expect(answer.status).toBe(200)
    await app.audit!.flush()
    const line = JSON.parse((await readFile(path, 'utf8')).trim().split('\n').at(-1)!) as { tool: string, source: string }
    expect(line).toMatchObject({ tool: 'slow_write', source: USER })
  })
})

describe('the TRUST_PROXY setting', () => {
  it('takes a hop count or addresses and CIDR ranges; refuses anything else, "true" included', () => {
    expect(loadConfig({ TRUST_PROXY: '2' }).trustProxy).toBe(2)
    expect(loadConfig({ TRUST_PROXY: '10.0.0.0/8, fd00::/8,192.0.2.1' }).trustProxy).toEqual(['10.0.0.0/8', 'fd00::/8', '192.0.2.1'])
    expect(loadConfig({ TRUST_PROXY: 'false' }).trustProxy).toBe(false)
    expect(loadConfig({}).trustProxy).toBe(false)
    for (const bad of ['true', 'proxy.internal', '10.0.0.0/33', '-1']) expect(() => loadConfig({ TRUST_PROXY: bad })).toThrow(/"trustProxy/)
  })
})
