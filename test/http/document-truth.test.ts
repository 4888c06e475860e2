import { describe, expect, it } from 'vitest'
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
