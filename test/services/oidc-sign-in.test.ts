import { createServer } from 'node:http'
import type { AddressInfo } from 'node:net'
import { describe, expect, it } from 'vitest'
import { buildApp } from '../../plugins/app.js'
import { loadConfig } from '../../src/services/config.js'
import { GatewayError } from '../../src/index.js'
import { MemoryKeyedStore } from '../../src/services/keyed-store.js'
import { OidcSignIn } from '../../src/services/approvals/sign-in/oidc-sign-in.js'

/*
 * A page session's life without an issuer to talk to (nothing listens on port 9): what the
 * gateway does with the session it holds. The sign-in itself, and a refresh the issuer grants,
 * run against a real oidc-provider in test/browser/approvals-oidc.test.ts.
 */

const NOW = 1_800_000_000_000
function signIn (store = new MemoryKeyedStore(100, () => NOW)): { signIn: OidcSignIn, store: MemoryKeyedStore } {
  return { store, signIn: new OidcSignIn({ issuer: 'http://127.0.0.1:9', clientId: 'page', scope: 'openid', sessionTtlMs: 3_600_000, store, now: () => NOW }) }
}
const session = (fields: Record<string, unknown>) => ({ accessToken: 'at', expiresAt: NOW + 300_000, endsAt: NOW + 3_600_000, ...fields })

describe('the approvals page\'s sign-in sessions', () => {
  it('answers a fresh access token from the store, without asking the issuer', async () => {
    const { signIn: s, store } = signIn()
    await store.set('session:abc', session({}), 60_000)
    await expect(s.accessToken('abc')).resolves.toBe('at')
  })

  it('an unknown session, or one past its lifetime, is no session (and is forgotten)', async () => {
    const { signIn: s, store } = signIn()
    await expect(s.accessToken('nope')).resolves.toBeUndefined()
    await store.set('session:old', session({ endsAt: NOW - 1 }), 60_000)
    await expect(s.accessToken('old')).resolves.toBeUndefined()
    await expect(store.get('session:old')).resolves.toBeUndefined()
  })

  it('an expiring token without a refresh token ends the session', async () => {
    const { signIn: s, store } = signIn()
    await store.set('session:x', session({ expiresAt: NOW + 10_000 }), 60_000)
    await expect(s.accessToken('x')).resolves.toBeUndefined()
    await expect(store.get('session:x')).resolves.toBeUndefined()
  })

  it('an issuer that cannot be reached to refresh is a 503, and the session is kept for the next try', async () => {
    const { signIn: s, store } = signIn()
    await store.set('session:y', session({ expiresAt: NOW + 10_000, refreshToken: 'rt' }), 60_000)
    const error = await s.accessToken('y').catch((e: unknown) => e)
    expect(error).toBeInstanceOf(GatewayError)
    expect((error as GatewayError).code).toBe('TOOLGATE_UNAVAILABLE')
    await expect(store.get('session:y')).resolves.toMatchObject({ refreshToken: 'rt' })
  })

  it('signing in while the issuer is down is a 503 with Retry-After', async () => {
    const error = await signIn().signIn.begin('http://127.0.0.1:3000/approvals/ui/callback').catch((e: unknown) => e)
    expect((error as GatewayError).code).toBe('TOOLGATE_UNAVAILABLE')
    expect((error as GatewayError).extensions.retryAfter).toBe(5)
  })
})

describe('the sign-in issuer on this machine', () => {
  it('may be plain http on any loopback address, 127.0.0.2 as well as 127.0.0.1', async () => {
    const { startIssuer } = await import('../browser/oidc-issuer.js')
    const issuer = await startIssuer('127.0.0.2')
    try {
      await issuer.start({ id: 'page', secret: 'page-secret-0123456789', redirectUri: 'http://127.0.0.1:3000/approvals/callback' })
      const store = new MemoryKeyedStore(100)
      const signIn = new OidcSignIn({ issuer: issuer.url, clientId: 'page', clientSecret: 'page-secret-0123456789', scope: 'openid', sessionTtlMs: 3_600_000, store })
      const { url } = await signIn.begin('http://127.0.0.1:3000/approvals/callback')
      expect(url.startsWith(`${issuer.url}/`)).toBe(true)
      expect(new URL(url).searchParams.get('code_challenge_method')).toBe('S256')
    } finally {
      await issuer.close()
    }
  })
})

describe('the sign-in checked at start-up', () => {
  const answering = async (handler: Parameters<typeof createServer>[1]): Promise<{ url: string, close: () => void }> => {
    const server = createServer(handler)
    await new Promise<void>(resolve => server.listen(0, '127.0.0.1', resolve))
    return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, close: () => { server.close() } }
  }
  const check = async (issuer: string): Promise<string | undefined> => await new OidcSignIn({ issuer, clientId: 'page', scope: 'openid', sessionTtlMs: 60_000, store: new MemoryKeyedStore(10) }).check()

  it('refuses a setting that cannot work, naming it and why', async () => {
    const notFound = await answering((_request, response) => { response.writeHead(404).end() })
    const other = await answering((_request, response) => { response.writeHead(200, { 'content-type': 'application/json' }).end('{"issuer":"https://elsewhere.example"}') })
    try {
      await expect(check(notFound.url)).rejects.toThrow(/invalid setting "JWT_ISSUER".*answers 404 at \/\.well-known\/openid-configuration/)
      await expect(check(other.url)).rejects.toThrow(/serves the metadata of another issuer/)
      await expect(check('http://issuer.example')).rejects.toThrow(/plain http off this machine/)
    } finally {
      notFound.close()
      other.close()
    }
  })

  it('an issuer that is down now is not a wrong setting: it says why, and the first sign-in asks again', async () => {
    const unavailable = await answering((_request, response) => { response.writeHead(503).end() })
    try {
      expect(await check('http://127.0.0.1:9')).toMatch(/fetch failed/)
      expect(await check(unavailable.url)).toMatch(/status code/)
    } finally {
      unavailable.close()
    }
  })

  it('a gateway whose sign-in cannot work does not start', async () => {
    const notFound = await answering((_request, response) => { response.writeHead(404).end() })
    try {
      const config = loadConfig({ JWT_ISSUER: notFound.url, JWT_AUDIENCE: 'toolgate', JWT_JWKS_URL: `${notFound.url}/jwks`, JWT_ALGORITHMS: 'RS256', APPROVALS_OIDC_CLIENT_ID: 'page' }, {})
      await expect(buildApp({ config, tools: [] })).rejects.toThrow(/APPROVALS_OIDC_CLIENT_ID is set.*no OpenID Connect issuer/)
    } finally {
      notFound.close()
    }
  })
})
