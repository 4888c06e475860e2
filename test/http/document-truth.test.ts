import { describe, expect, it } from 'vitest'
import { z } from 'zod'
import { defineTool } from '../../src/index.js'
import { httpTools } from '../fixtures/http-tools.js'
import { auth, KEYS, testApp } from './helpers.js'
import { expectProblem } from './problem-shape.js'

const post = (url: string, payload: unknown, headers: Record<string, string> = {}) => ({ method: 'POST' as const, url, payload: payload as object, headers: { ...auth(KEYS.admin), ...headers } })

describe('answers match the document', () => {
  it('a dry run answers under its own media type, a real call as application/json', async () => {
    const app = await testApp()
    const dry = await app.inject(post('/tools/slow_write?dryRun=true', { ms: 5 }))
    expect(dry.statusCode).toBe(200)
    expect(dry.headers['content-type']).toMatch(/^application\/vnd\.toolgate\.dry-run\+json(;|$)/)
    const real = await app.inject(post('/tools/slow_write', { ms: 5 }))
    expect(real.headers['content-type']).toBe('application/json; charset=utf-8')
    const document = (await app.inject({ method: 'GET', url: '/openapi.json', headers: auth(KEYS.admin) })).json()
    expect(Object.keys(document.paths['/tools/slow_write'].post.responses['200'].content)).toEqual(['application/json', 'application/vnd.toolgate.dry-run+json'])
  })
})

describe('every 400 carries errors, every malformed path is problem+json', () => {
  it('a bad query value (dryRun=maybe) is 400 with an errors entry pointing at the parameter', async () => {
    const app = await testApp()
    const body = expectProblem(await app.inject(post('/tools/echo?dryRun=maybe', { text: 'x' })), 400, 'TOOLGATE_INVALID_INPUT')
    expect(body.errors).toEqual([{ pointer: '/query/dryRun', message: expect.any(String), code: 'invalid_value' }])
  })

  it('an over-long id on GET /tools/{id} is 400 with errors', async () => {
    const app = await testApp()
    const body = expectProblem(await app.inject({ method: 'GET', url: `/tools/${'a'.repeat(70)}`, headers: auth(KEYS.admin) }), 400, 'TOOLGATE_INVALID_INPUT')
    expect(body.errors).toEqual([expect.objectContaining({ pointer: '/params/id' })])
  })

  it.each(['/tools/%ff', `/tools/${'a'.repeat(200)}`, '/%zz'])('%s answers problem+json with errors, not Fastify\'s default body', async url => {
    const app = await testApp()
    for (const method of ['GET', 'POST'] as const) {
      const body = expectProblem(await app.inject({ method, url, headers: auth(KEYS.admin), payload: method === 'POST' ? {} : undefined }), 400, 'TOOLGATE_MALFORMED_REQUEST')
      expect(body.errors).toEqual([expect.objectContaining({ pointer: '/path' })])
    }
  })

  it('a 400 from the pipeline without its own list still carries one (escalation not supported)', async () => {
    const app = await testApp()
    const body = expectProblem(await app.inject(post('/tools/echo?escalate=true', { text: 'x' })), 400)
    expect(body.errors).toEqual([{ pointer: '', message: body.detail, code: String(body.code).toLowerCase() }])
  })
})

describe('the document lists what operations answer', () => {
  it('GET /tools/{id} documents 400, and the admission hook\'s 401, 429 and 503 on every authenticated operation', async () => {
    const app = await testApp()
    const document = (await app.inject({ method: 'GET', url: '/openapi.json', headers: auth(KEYS.admin) })).json()
    expect(Object.keys(document.paths['/tools/{id}'].get.responses)).toEqual(expect.arrayContaining(['400', '401', '404', '429', '503']))
    expect(Object.keys(document.paths['/tools'].get.responses)).toEqual(expect.arrayContaining(['400', '401', '429', '503']))
    expect(Object.keys(document.paths['/healthz'].get.responses)).toEqual(expect.arrayContaining(['200', '400']))
  })

  it('a tool that requires an idempotency key documents the header as required; others as optional', async () => {
    const keyed = defineTool({
      id: 'keyed', kind: 'write', description: 'Needs a key.', isReadOnly: false, isConcurrencySafe: false, requiresIdempotencyKey: true,
      inputSchema: z.object({}), outputSchema: z.null(), authorize () {}, execute: () => null,
    })
    const app = await testApp({}, [...httpTools, keyed])
    const document = (await app.inject({ method: 'GET', url: '/openapi.json', headers: auth(KEYS.admin) })).json()
    const header = (tool: string) => document.paths[`/tools/${tool}`].post.parameters.find((p: { name: string }) => p.name === 'idempotency-key')
    const requiring = Object.keys(document.paths).find(path => document.paths[path].post?.parameters?.some((p: { name: string, required: boolean }) => p.name === 'idempotency-key' && p.required))
    expect(header('echo').required).toBe(false)
    expect(requiring).toBe('/tools/keyed')
  })
})
