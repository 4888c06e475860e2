import { randomBytes } from 'node:crypto'
import { Redis } from 'ioredis'
import type { Browser } from 'playwright-core'
import type { FastifyInstance } from 'fastify'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { buildApp } from '../../plugins/app.js'
import { loadConfig } from '../../src/services/config.js'
import { API_KEYS, KEYS } from '../approvals/helpers.js'
import { cleanPrefix, HAVE_REDIS, REDIS_URL, testPrefix } from '../redis/redis-env.js'
import { SLOW } from '../slow.js'
import { freePort, upstreamsFile } from '../upstreams/helpers.js'
import { LINK_CLIENT, startAuthorizationServer, type AuthorizationServer } from '../upstreams/identity/authorization-server.js'
import { startBearerApi, type BearerUpstream } from '../upstreams/identity/bearer-upstreams.js'
import { HAVE_CHROMIUM, launchChromium } from './chromium.js'

/*
 * Two replicas on one Redis share people's links: linked on one, used on the other, and when the
 * access token expires under calls to both, refreshed once.
 */

const ready = HAVE_CHROMIUM && HAVE_REDIS
const prefix = testPrefix()
let issuer: AuthorizationServer
let api: BearerUpstream
let browser: Browser
const replicas: Array<{ app: FastifyInstance, base: string }> = []

beforeAll(async () => {
  if (!ready) return
  const ports = [await freePort(), await freePort()]
  const bases = ports.map(port => `http://127.0.0.1:${port}`)
  issuer = await startAuthorizationServer({ accessTokenTtlSec: 4, linkRedirectUri: bases.map(base => `${base}/connections/callback`) })
  api = await startBearerApi({ jwksUrl: `${issuer.url}/jwks`, issuer: issuer.url })
  const credentialsKey = randomBytes(32).toString('base64')
  for (const [i, port] of ports.entries()) {
    const config = loadConfig({}, {
      apiKeys: API_KEYS, port, redisUrl: REDIS_URL, redisPrefix: prefix, credentialsKey,
      upstreamsFile: upstreamsFile({ openapi: { api: { document: `${api.url}/openapi.json`, auth: { type: 'link', issuer: issuer.url, clientId: LINK_CLIENT.id, clientSecret: LINK_CLIENT.secret, scope: 'openid upstream:use', resource: api.url } } } }),
    })
    const app = await buildApp({ config, tools: [] })
    await app.listen({ host: '127.0.0.1', port })
    replicas.push({ app, base: bases[i]! })
  }
  browser = await launchChromium()
}, SLOW.BROWSER_MS)
afterAll(async () => {
  await browser?.close()
  for (const { app } of replicas) await app.close()
  await Promise.all([issuer?.close(), api?.close()])
  if (ready) await cleanPrefix(prefix)
})

async function call (base: string): Promise<{ status: number, body: Record<string, unknown> }> {
  const response = await fetch(`${base}/tools/api_whoami`, { method: 'POST', headers: { 'content-type': 'application/json', 'x-api-key': KEYS.alice }, body: '{}' })
  return { status: response.status, body: await response.json() as Record<string, unknown> }
}

describe.skipIf(!ready)('links shared by two replicas on Redis', { timeout: SLOW.BROWSER_MS }, () => {
  it('linked on one, used on the other, refreshed once when the token expires under calls to both', async () => {
    const [one, two] = replicas as [typeof replicas[0], typeof replicas[0]]
    const page = await browser.newPage()
    await page.goto(`${one.base}/connections/ui`)
    await page.locator('#key').fill(KEYS.alice)
    await page.locator('#key-form button[type="submit"]').click()
    await page.locator('li.connection[data-upstream="api"] button.link').click()
    await page.locator('input[name="login"]').fill('alice-upstream')
    await page.locator('input[name="password"]').fill('any')
    await page.locator('button[type="submit"]').click()
    await page.locator('button[type="submit"]', { hasText: 'Continue' }).click()
    await page.locator('li.connection.linked[data-upstream="api"]').waitFor()
    await page.close()

    expect(await call(two.base)).toEqual({ status: 200, body: { subject: 'alice-upstream' } })
    const refreshes = (): number => issuer.grants.filter(grant => grant.type === 'refresh_token').length
    expect(refreshes()).toBe(0)
    await new Promise(resolve => setTimeout(resolve, 4_500))
    const answers = await Promise.all(Array.from({ length: 16 }, async (_, i) => await call((i % 2 === 0 ? one : two).base)))
    for (const answer of answers) expect(answer).toEqual({ status: 200, body: { subject: 'alice-upstream' } })
    expect(refreshes()).toBe(1)
    // What Redis holds of the link is sealed (JWE), and the tokens sent are nowhere in it.
    const redis = new Redis(REDIS_URL)
    const stored = await Promise.all((await redis.keys(`${prefix}links:*`)).map(async key => await redis.get(key)))
    redis.disconnect()
    expect(stored).toHaveLength(1)
    for (const value of stored) {
      expect(JSON.parse(value!).split('.')).toHaveLength(5)
      for (const sent of api.tokens) expect(value).not.toContain(sent.replace('Bearer ', ''))
    }
    const status = await (await fetch(`${two.base}/connections`, { headers: { 'x-api-key': KEYS.alice } })).json() as { connections: Array<{ state: string }> }
    expect(status.connections).toEqual([expect.objectContaining({ state: 'linked' })])
  })
})
