import { randomBytes, randomInt } from 'node:crypto'
import type { FastifyInstance } from 'fastify'
import { describe, expect, it } from 'vitest'
import { SLOW } from '../slow.js'
import { httpTools } from '../fixtures/http-tools.js'
import { auth, KEYS, testApp } from '../http/helpers.js'
import { scrape } from './scrape.js'

const ALPHABET = 'abcdefghijklmnopqrstuvwxyz0123456789_'
const KNOWN = new Set(httpTools.map(tool => tool.id))

/** A random name a caller might send as a tool id: 12 to 64 id characters, never a real tool. */
function randomName (): string {
  let name = ''
  while (name.length < 12 || KNOWN.has(name)) name = Array.from({ length: randomInt(12, 65) }, () => ALPHABET[randomInt(ALPHABET.length)]).join('')
  return name
}

/**
 * Every series key of the exposition, except the runtime's own by-type gauges and GC kinds:
 * their label sets follow what the process does (a timer, a socket, a major GC), not requests.
 */
async function seriesOf (app: FastifyInstance): Promise<{ keys: string[], text: string }> {
  const { samples, text } = await scrape(app)
  const keys = [...samples.keys()].filter(key => !/^nodejs_(active_\w+|gc_duration_seconds_\w+)\{/.test(key)).sort()
  return { keys, text }
}

// A thousand requests through the whole pipeline per test: seconds on a loaded machine.
describe('what callers send never creates series', { timeout: SLOW.CPU_MS }, () => {
  it('1000 calls to random tool names leave the series unchanged, and no name appears in /metrics', async () => {
    const app = await testApp({}, httpTools)
    const before = await seriesOf(app)
    const names = Array.from({ length: 1000 }, randomName)
    for (const name of names) {
      const response = await app.inject({ method: 'POST', url: `/tools/${name}`, headers: auth(KEYS.admin), payload: { text: name } })
      expect(response.statusCode).toBe(404)
    }
    const after = await seriesOf(app)
    expect(after.keys.length).toBe(before.keys.length)
    expect(after.keys).toEqual(before.keys)
    expect(names.filter(name => after.text.includes(name))).toEqual([])
  })

  it('random principals, inputs, sessions, query strings and paths leave the series unchanged', async () => {
    const app = await testApp({}, httpTools)
    // One call of each outcome these requests produce, so their (bounded) histograms exist.
    await app.inject({ method: 'POST', url: '/tools/echo', headers: auth(KEYS.admin), payload: { text: 'x' } })
    await app.inject({ method: 'POST', url: '/tools/echo', headers: auth(KEYS.admin), payload: { text: '' } })
    await app.inject({ method: 'POST', url: '/tools/echo', payload: { text: 'x' } })
    const before = await seriesOf(app)
    const sent: string[] = []
    for (let i = 0; i < 300; i++) {
      const token = randomBytes(12).toString('hex')
      sent.push(token)
      // Unknown principal, from a random address (one address failing 300 times would be slowed down to 429s).
      await app.inject({ method: 'POST', url: '/tools/echo', headers: auth(`key-${token}`), payload: { text: 'x' }, remoteAddress: `10.${randomInt(256)}.${randomInt(256)}.${randomInt(256)}` })
      await app.inject({ method: 'POST', url: '/tools/echo', headers: auth(KEYS.admin), payload: { text: '', [`field_${token}`]: token } }) // bad input
      await app.inject({ method: 'POST', url: `/tools/echo?mode=${token}`, headers: { ...auth(KEYS.admin), 'x-session-id': token }, payload: { text: token } })
      await app.inject({ method: 'GET', url: `/${token}/tools/${token}` }) // unknown path
    }
    const after = await seriesOf(app)
    expect(after.keys).toEqual(before.keys)
    expect(sent.filter(token => after.text.includes(token))).toEqual([])
  })
})
