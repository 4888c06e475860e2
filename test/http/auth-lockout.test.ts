import { describe, expect, it } from 'vitest'
import { HS_SECRET, ISSUER, AUDIENCE, secretBytes, sign } from '../services/auth/helpers.js'
import { API_KEYS, KEYS, testApp } from './helpers.js'
import { listening, send } from './raw-http.js'

/**
 * The failed-authentication throttle against real sockets: each client binds its own loopback
 * source address (127.0.0.2, 127.0.0.3, ...), as callers behind one NAT, or several, would be.
 */

const ATTACKER = '127.0.0.2'
const USER = '127.0.0.3'
const LIMIT = 5

/** A gateway taking API keys and HS256 tokens, its throttle at `LIMIT` failures per address. */
async function gateway (): Promise<number> {
  const app = await testApp({ apiKeys: API_KEYS, jwt: { issuer: ISSUER, audience: AUDIENCE, algorithms: ['HS256'], key: HS_SECRET }, authFailureLimit: LIMIT })
  return await listening(app)
}

/** Fail authentication from `from` past the limit, with no credential at all. */
async function exhaust (port: number, from: string): Promise<void> {
  for (let i = 0; i <= LIMIT; i++) await send(port, from, {})
  expect((await send(port, from, {})).status).toBe(429)
}

const token = (subject: string, issuedAt?: number): Promise<string> => sign(secretBytes(), { scope: 'tools:read tools:call' }, { alg: 'HS256', subject, issuedAt })

describe('a valid credential is never refused for other callers\' failures', () => {
  it('an API key this process never saw gets in from the address that keeps failing, and from any other', async () => {
    const port = await gateway()
    await exhaust(port, ATTACKER)
    expect((await send(port, ATTACKER, { 'x-api-key': KEYS.caller })).status).toBe(200)
    expect((await send(port, USER, { 'x-api-key': KEYS.reader })).status).toBe(200)
  })

  it('a JWT of a subject never seen, and a refreshed token of a known subject, get in from a failing address', async () => {
    const port = await gateway()
    expect((await send(port, USER, { authorization: `Bearer ${await token('alice', Math.floor(Date.now() / 1000) - 60)}` })).status).toBe(200)
    await exhaust(port, USER)
    expect((await send(port, USER, { authorization: `Bearer ${await token('bob')}` })).status).toBe(200)
    expect((await send(port, USER, { authorization: `Bearer ${await token('alice')}` })).status).toBe(200)
  })

  it('a key proven as X-Api-Key is the same principal as Authorization: Bearer, with any run of spaces', async () => {
    const port = await gateway()
    expect((await send(port, USER, { 'x-api-key': KEYS.admin })).status).toBe(200)
    await exhaust(port, USER)
    expect((await send(port, USER, { authorization: `Bearer ${KEYS.admin}` })).status).toBe(200)
    expect((await send(port, USER, { authorization: `Bearer    ${KEYS.admin}` })).status).toBe(200)
    expect((await send(port, USER, { authorization: `ApiKey ${KEYS.admin}` })).status).toBe(200)
  })

  it('POST /mcp follows the same rule', async () => {
    const port = await gateway()
    await exhaust(port, ATTACKER)
    const initialize = JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 't', version: '1' } } })
    const headers = { 'content-type': 'application/json', accept: 'application/json, text/event-stream', 'x-api-key': KEYS.caller }
    expect((await send(port, ATTACKER, headers, '/mcp', 'POST', initialize)).status).toBe(200)
  })

  it('a key that floods the gateway with new spellings of itself cannot push out another\'s proof', async () => {
    const app = await testApp({ authFailureLimit: LIMIT })
    const list = (headers: Record<string, string>, remoteAddress: string) => app.inject({ method: 'GET', url: '/tools', headers, remoteAddress })
    expect((await list({ 'x-api-key': KEYS.admin }, USER)).statusCode).toBe(200)
    // 5 000 distinct header strings of one low-privilege key (more than any memory of credentials holds).
    for (let i = 1; i <= 5_000; i++) await list({ authorization: `Bearer${' '.repeat(i)}${KEYS.reader}` }, ATTACKER)
    for (let i = 0; i <= LIMIT; i++) await list({}, ATTACKER)
    expect((await list({ 'x-api-key': KEYS.admin }, ATTACKER)).statusCode).toBe(200)
  }, 60_000)
})

describe('a source that keeps failing is still slowed down', () => {
  it('its failures answer 429 with Retry-After; another address\'s failures still answer 401', async () => {
    const port = await gateway()
    await exhaust(port, ATTACKER)
    const refused = await send(port, ATTACKER, { 'x-api-key': 'guess-0123456789' })
    expect(refused.status).toBe(429)
    expect(Number(refused.headers['retry-after'])).toBeGreaterThan(0)
    expect(JSON.parse(refused.body)).toMatchObject({ code: 'TOOLGATE_RATE_LIMITED', status: 429 })
    expect((await send(port, ATTACKER, { authorization: `Bearer ${await sign(secretBytes('another-secret-that-is-32-bytes-or-more'), {}, { alg: 'HS256' })}` })).status).toBe(429)
    expect((await send(port, USER, { 'x-api-key': 'guess-0123456789' })).status).toBe(401)
  })
})
