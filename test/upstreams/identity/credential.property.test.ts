import { createServer, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import fc from 'fast-check'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { Principal } from '../../../src/core/app-context.js'
import { rememberBearer } from '../../../src/services/auth/caller-tokens.js'
import { credentialOf } from '../../../src/services/upstreams/credentials/credential.js'
import { TokenCache } from '../../../src/services/upstreams/credentials/token-cache.js'

/*
 * The invariants of credentials under concurrency, against a token endpoint that answers late
 * and out of order: a caller's request never carries a token made for another caller, and a
 * key's token is fetched once however many wait for it.
 */

let server: Server
let endpoint = ''
/** Every exchange the endpoint answered: the subject token it was given. */
const exchanged: string[] = []

beforeAll(async () => {
  let n = 0
  server = createServer((request, response) => {
    let body = ''
    request.on('data', (chunk: Buffer) => { body += String(chunk) })
    request.on('end', () => {
      const params = new URLSearchParams(body)
      const subject = params.get('subject_token') ?? 'gateway'
      exchanged.push(subject)
      // Late and out of order: a later request may be answered first.
      setTimeout(() => {
        response.writeHead(200, { 'content-type': 'application/json', 'cache-control': 'no-store' })
        response.end(JSON.stringify({ access_token: `for:${subject}:${++n}`, token_type: 'Bearer', expires_in: 600, issued_token_type: 'urn:ietf:params:oauth:token-type:access_token' }))
      }, Math.floor(Math.random() * 15))
    })
  })
  await new Promise<void>(resolve => server.listen(0, '127.0.0.1', resolve))
  endpoint = `http://127.0.0.1:${(server.address() as AddressInfo).port}/token`
})
afterAll(async () => { await new Promise(resolve => server.close(resolve)) })

const quiet = { fetched: () => undefined, failed: () => undefined, log: () => undefined }

describe('credentials under concurrency', () => {
  it('a caller\'s request carries only a token made from that caller\'s own token, however calls interleave', async () => {
    await fc.assert(fc.asyncProperty(
      fc.uniqueArray(fc.stringMatching(/^[a-z]{1,8}$/), { minLength: 2, maxLength: 8 }),
      fc.array(fc.nat(), { minLength: 10, maxLength: 60 }),
      async (names, picks) => {
        const credential = credentialOf({ type: 'token_exchange', client: { tokenEndpoint: endpoint, clientId: 'gw', clientSecret: 'gw-secret', clientAuth: 'client_secret_basic' }, audience: 'https://upstream.test' }, { upstream: 'up', events: quiet })
        // Each principal comes with its own bearer token, as a verified JWT caller does.
        const principals = names.map(name => rememberBearer({ id: `jwt:${name}`, scopes: [], via: 'jwt' } satisfies Principal, `caller-token-of-${name}`))
        const calls = picks.map(pick => principals[pick % principals.length]!)
        const applied = await Promise.all(calls.map(async principal => ({ principal, applied: await credential.apply(principal, 5_000) })))
        for (const { principal, applied: { headers } } of applied) {
          expect(headers.authorization).toMatch(new RegExp(`^Bearer for:caller-token-of-${principal.id.slice(4)}:\\d+$`))
        }
        // One exchange per principal, however many of its calls waited.
        const used = new Set(calls.map(principal => principal.id))
        const tokens = new Set(applied.map(({ applied: { headers } }) => headers.authorization))
        expect(tokens.size).toBe(used.size)
      },
    ), { numRuns: 25 })
  })

  it('a kept token is used until shortly before it expires, then fetched again, once (a model with a controlled clock)', async () => {
    await fc.assert(fc.asyncProperty(
      fc.array(fc.record({ key: fc.constantFrom('a', 'b', 'c'), advanceMs: fc.integer({ min: 0, max: 200_000 }), together: fc.integer({ min: 1, max: 4 }) }), { minLength: 1, maxLength: 40 }),
      fc.integer({ min: 10, max: 900 }),
      async (steps, lifeSeconds) => {
        let now = 1_000_000
        const cache = new TokenCache({ now: () => now })
        const fetched: Array<{ key: string, at: number }> = []
        const model = new Map<string, number>()
        for (const { key, advanceMs, together } of steps) {
          now += advanceMs
          const expiresAt = model.get(key)
          // Early by 30 s, or a quarter of the life when that is shorter.
          const early = Math.min(30_000, (lifeSeconds * 1000) / 4)
          const stillGood = expiresAt !== undefined && expiresAt - early > now
          const before = fetched.length
          const got = await Promise.all(Array.from({ length: together }, async () => await cache.get(key, async () => {
            fetched.push({ key, at: now })
            return { value: `${key}@${now}`, expiresAt: now + lifeSeconds * 1000 }
          }, 1_000)))
          expect(fetched.length - before).toBe(stillGood ? 0 : 1)
          if (!stillGood) model.set(key, now + lifeSeconds * 1000)
          for (const { token } of got) {
            expect(token.value.startsWith(`${key}@`)).toBe(true)
            expect(token.expiresAt).toBe(model.get(key))
          }
        }
      },
    ), { numRuns: 200 })
  })
})
