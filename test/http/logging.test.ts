import type { FastifyInstance } from 'fastify'
import { afterEach, describe, expect, it } from 'vitest'
import { buildApp } from '../../plugins/app.js'
import { loadConfig } from '../../src/services/config.js'
import { httpTools } from '../fixtures/http-tools.js'
import { API_KEYS, auth, KEYS } from './helpers.js'

interface Line { level: number, msg: string, reqId?: string, [key: string]: unknown }

const apps: FastifyInstance[] = []
afterEach(async () => { await Promise.all(apps.splice(0).map(app => app.close())) })

/** The app at `level`, with every line it writes. */
async function logged (level: 'info' | 'warn'): Promise<{ app: FastifyInstance, lines: Line[] }> {
  const lines: Line[] = []
  const config = loadConfig({}, { apiKeys: API_KEYS, logLevel: level })
  const app = await buildApp({ config, tools: httpTools, logger: { level, stream: { write: (line: string) => { lines.push(JSON.parse(line) as Line) } } } })
  apps.push(app)
  return { app, lines }
}

const call = (app: FastifyInstance, tool: string, payload: object) =>
  app.inject({ method: 'POST', url: `/tools/${tool}`, payload, headers: { ...auth(KEYS.admin), 'x-request-id': 'req-under-test' } })

describe('the gateway log', () => {
  it('at info, a tool call writes exactly one line: the tool, its outcome and the request id; no framework request lines', async () => {
    const { app, lines } = await logged('info')
    expect((await call(app, 'echo', { text: 'hi' })).statusCode).toBe(200)
    const mine = lines.filter(line => line.reqId === 'req-under-test')
    expect(mine).toHaveLength(1)
    expect(mine[0]).toMatchObject({ level: 30, msg: 'tool call', tool: 'echo', outcome: 'ok', status: 200, principal: 'admin' })
    expect(typeof mine[0]!.callId).toBe('string')
    expect(lines.map(line => line.msg)).not.toContain('incoming request')
    expect(lines.map(line => line.msg)).not.toContain('request completed')
  })

  it('at info, any other request writes one "request" line with its status', async () => {
    const { app, lines } = await logged('info')
    await app.inject({ method: 'GET', url: '/healthz', headers: { 'x-request-id': 'health-check' } })
    const mine = lines.filter(line => line.reqId === 'health-check')
    expect(mine).toEqual([expect.objectContaining({ msg: 'request', method: 'GET', url: '/healthz', status: 200 })])
  })

  it('at warn, a successful call writes nothing and a failing one writes one error line with the cause', async () => {
    const { app, lines } = await logged('warn')
    await call(app, 'echo', { text: 'hi' })
    expect(lines.filter(line => line.reqId === 'req-under-test')).toEqual([])
    expect((await call(app, 'crash', {})).statusCode).toBe(500)
    const mine = lines.filter(line => line.reqId === 'req-under-test')
    expect(mine).toHaveLength(1)
    expect(mine[0]).toMatchObject({ level: 50, msg: 'tool call failed', tool: 'crash', status: 500 })
    expect(mine[0]!.err).toBeDefined()
  })

  it('never writes a credential', async () => {
    const { app, lines } = await logged('info')
    await call(app, 'echo', { text: 'hi' })
    await app.inject({ method: 'POST', url: '/tools/echo', payload: { text: 'hi' }, headers: auth('wrong-key-0123456789') })
    expect(lines.length).toBeGreaterThan(0)
    const written = JSON.stringify(lines)
    expect(written).not.toContain(KEYS.admin)
    expect(written).not.toContain('wrong-key-0123456789')
  })
})
