import { afterEach, describe, expect, it } from 'vitest'
import type { FastifyInstance } from 'fastify'
import { buildApp } from '../../../plugins/app.js'
import { loadConfig } from '../../../src/services/config.js'
import { SLOW } from '../../slow.js'
import { eventually, isRunning, upstreamsFile } from '../helpers.js'
import { CALLER_AUDIENCE, CALLER_ISSUER, GATEWAY_CLIENT, startAuthorizationServer, type AuthorizationServer } from './authorization-server.js'

/*
 * A stdio server that takes a person's token from its environment, run once per person: each
 * child gets its person's exchanged token and serves nobody else; children are bounded in
 * number, stopped when idle, and stopped with the gateway.
 */

const closers: Array<() => Promise<void>> = []
afterEach(async () => {
  for (const close of closers.splice(0).reverse()) await close()
})

const SERVER = new URL('../../fixtures/mcp-upstream/person-env.mjs', import.meta.url).pathname

async function gateway (issuer: AuthorizationServer, perPerson: { maxChildren?: number, idleSeconds?: number } = {}): Promise<FastifyInstance> {
  process.env.TOOLGATE_TEST_CLIENT_SECRET = GATEWAY_CLIENT.secret
  const config = loadConfig({ JWT_ISSUER: CALLER_ISSUER, JWT_AUDIENCE: CALLER_AUDIENCE, JWT_KEY: issuer.callerKeyPem, JWT_ALGORITHMS: 'RS256' }, {
    upstreamsFile: upstreamsFile({
      mcpServers: {
        people: {
          command: process.execPath, args: [SERVER],
          auth: { type: 'token_exchange', issuer: issuer.url, clientId: GATEWAY_CLIENT.id, clientSecret: '${TOOLGATE_TEST_CLIENT_SECRET}', audience: 'https://people.test', env: 'PERSON_TOKEN', ...perPerson },
        },
      },
    }),
  })
  const app = await buildApp({ config, tools: [] })
  closers.push(async () => { await app.close() })
  return app
}

async function whoami (app: FastifyInstance, token: string): Promise<{ subject: string, pid: number }> {
  const response = await app.inject({ method: 'POST', url: '/tools/people_whoami', payload: {}, headers: { authorization: `Bearer ${token}` } })
  expect(response.statusCode, response.body).toBe(200)
  return response.json<{ structuredContent: { subject: string, pid: number } }>().structuredContent
}

describe('a stdio server run once per person', { timeout: SLOW.PROCESS_MS }, () => {
  it('gives each person a child of their own, with their token, and never another\'s', async () => {
    const issuer = await startAuthorizationServer()
    closers.push(issuer.close)
    const app = await gateway(issuer)
    const [ana, ben] = [await issuer.mintCaller('ana'), await issuer.mintCaller('ben')]
    const answers = await Promise.all([ana, ben, ana, ben, ana].map(async token => await whoami(app, token)))
    expect(answers.map(answer => answer.subject)).toEqual(['ana', 'ben', 'ana', 'ben', 'ana'])
    const pids = new Map(answers.map(answer => [answer.subject, answer.pid]))
    expect(new Set(answers.filter(answer => answer.subject === 'ana').map(answer => answer.pid))).toEqual(new Set([pids.get('ana')]))
    expect(pids.get('ana')).not.toBe(pids.get('ben'))
    const status = (await app.inject({ method: 'GET', url: '/upstreams', headers: { authorization: `Bearer ${ana}` } })).json<{ upstreams: Array<{ name: string, children?: number, auth?: string }> }>().upstreams
    expect(status).toEqual([expect.objectContaining({ name: 'people', children: 2, auth: 'token_exchange' })])
    await app.close()
    // The gateway's children are the gateway's to stop.
    await eventually(() => !isRunning(pids.get('ana')!) && !isRunning(pids.get('ben')!), 'the children stopped with the gateway')
  })

  it('bounds the children: the least recently used idle one makes room; an idle child stops', async () => {
    const issuer = await startAuthorizationServer()
    closers.push(issuer.close)
    const app = await gateway(issuer, { maxChildren: 1, idleSeconds: 1 })
    const [ana, ben] = [await issuer.mintCaller('ana'), await issuer.mintCaller('ben')]
    const first = await whoami(app, ana)
    const second = await whoami(app, ben)
    expect(second.subject).toBe('ben')
    await eventually(() => !isRunning(first.pid), 'ana\'s child stopped to make room for ben\'s')
    await eventually(() => !isRunning(second.pid), 'ben\'s child stopped once idle', 10_000)
    expect((await whoami(app, ana)).subject).toBe('ana')
  })
})
