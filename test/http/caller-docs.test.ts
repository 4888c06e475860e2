import type { FastifyInstance } from 'fastify'
import { describe, expect, it } from 'vitest'
import { DocumentViews } from '../../src/services/document-views.js'
import { httpTools } from '../fixtures/http-tools.js'
import { auth, KEYS, testApp } from './helpers.js'
import { expectProblem } from './problem-shape.js'

const toolPaths = (document: { paths: Record<string, unknown> }): string[] => Object.keys(document.paths).filter(path => /^\/tools\/[a-z]/.test(path)).sort()
const documentOf = async (app: FastifyInstance, key?: string, url = '/openapi.json') => {
  const response = await app.inject({ method: 'GET', url, headers: key === undefined ? {} : auth(key) })
  expect(response.statusCode, response.body).toBe(200)
  return response.json<{ paths: Record<string, unknown>, components?: { schemas?: Record<string, unknown> } }>()
}

describe('per-caller documents', () => {
  it('need the same credentials as GET /tools: 401 without, 403 without tools:read', async () => {
    const app = await testApp({ apiKeys: [...(await import('./helpers.js')).API_KEYS, { principal: 'nobody', sha256: (await import('../../src/services/auth/api-keys.js')).hashApiKey('no-scopes-key-0123456789'), scopes: [] }] })
    expectProblem(await app.inject({ method: 'GET', url: '/openapi.json' }), 401, 'TOOLGATE_UNAUTHENTICATED')
    expectProblem(await app.inject({ method: 'GET', url: '/docs/json' }), 401, 'TOOLGATE_UNAUTHENTICATED')
    expectProblem(await app.inject({ method: 'GET', url: '/docs/yaml' }), 401, 'TOOLGATE_UNAUTHENTICATED')
    expectProblem(await app.inject({ method: 'GET', url: '/openapi.json', headers: auth('no-scopes-key-0123456789') }), 403, 'TOOLGATE_FORBIDDEN')
  })

  it('list exactly the tools GET /tools lists for that caller: an inactive tool is absent, like an unknown one', async () => {
    const app = await testApp()
    for (const key of [KEYS.admin, KEYS.caller]) {
      const listed = (await app.inject({ method: 'GET', url: '/tools', headers: auth(key) })).json<{ tools: Array<{ id: string }> }>().tools.map(tool => `/tools/${tool.id}`).sort()
      expect(toolPaths(await documentOf(app, key))).toEqual(listed)
      expect(toolPaths(await documentOf(app, key, '/docs/json'))).toEqual(listed)
    }
    expect(toolPaths(await documentOf(app, KEYS.admin))).toContain('/tools/admin_only')
    expect(toolPaths(await documentOf(app, KEYS.caller))).not.toContain('/tools/admin_only')
    // Nothing else in the caller's document names the hidden tool.
    expect(JSON.stringify(await documentOf(app, KEYS.caller))).not.toContain('admin_only')
  })

  it('follow the permission rules', async () => {
    const app = await testApp({ rules: [{ principal: 'caller', allow: ['echo', 'slow_*'], deny: [] }, { principal: 'admin', allow: ['*'], deny: [] }] })
    expect(toolPaths(await documentOf(app, KEYS.caller))).toEqual(['/tools/echo', '/tools/slow_write'])
  })

  it('the whole document without credentials only when DOCS_PUBLIC is on', async () => {
    const app = await testApp({ docsPublic: true })
    const published = await documentOf(app)
    expect(toolPaths(published)).toEqual(httpTools.map(tool => `/tools/${tool.id}`).sort())
    // Credentials still get the caller's own view.
    expect(toolPaths(await documentOf(app, KEYS.caller))).not.toContain('/tools/admin_only')
    // Publishing the document opens nothing else.
    expectProblem(await app.inject({ method: 'GET', url: '/tools' }), 401)
    expectProblem(await app.inject({ method: 'POST', url: '/tools/echo', payload: { text: 'x' } }), 401)
  })

  it('the Swagger UI page loads without credentials and sends the credential it asks for with its requests', async () => {
    const app = await testApp()
    const page = await app.inject({ method: 'GET', url: '/docs/' })
    expect(page.statusCode).toBe(200)
    const initializer = await app.inject({ method: 'GET', url: '/docs/static/swagger-initializer.js' })
    expect(initializer.statusCode).toBe(200)
    // Run the served configuration as the browser would, with a fake tab around it.
    const source = initializer.body.slice(initializer.body.indexOf('const config ='), initializer.body.indexOf('const resConfig'))
    const stored = new Map<string, string>()
    let reloaded = 0
    const tab = { getItem: (key: string) => stored.get(key) ?? null, setItem: (key: string, value: string) => { stored.set(key, value) } }
     
    const config = new Function('sessionStorage', 'prompt', 'location', `${source}; return config`)(tab, () => ` ${KEYS.caller} `, { reload: () => { reloaded++ } }) as {
      requestInterceptor: (request: { headers: Record<string, string> }) => { headers: Record<string, string> }
      responseInterceptor: (response: { status: number, url: string }) => unknown
    }
    expect(config.requestInterceptor({ headers: {} }).headers).toEqual({})
    config.responseInterceptor({ status: 401, url: 'http://127.0.0.1:3000/docs/json' })
    expect(reloaded).toBe(1)
    expect(config.requestInterceptor({ headers: {} }).headers).toEqual({ 'X-Api-Key': KEYS.caller })
    stored.set('toolgate-credential', 'Bearer a.b.c')
    expect(config.requestInterceptor({ headers: {} }).headers).toEqual({ Authorization: 'Bearer a.b.c' })
    // With that credential, the UI's own document request answers the caller's view.
    expect(toolPaths(await documentOf(app, KEYS.caller, '/docs/json'))).not.toContain('/tools/admin_only')
  })
})

describe('DocumentViews', () => {
  const full = {
    openapi: '3.1.0',
    paths: { '/tools': {}, '/tools/a': { post: { $ref: '#/components/schemas/A' } }, '/tools/b': { post: { $ref: '#/components/schemas/B' } } },
    components: { schemas: { A: { $ref: '#/components/schemas/Shared' }, B: {}, Shared: {}, Problem: {} } },
  }
  const views = (): DocumentViews => new DocumentViews(() => full, path => /^\/tools\/([ab])$/.exec(path)?.[1])

  it('keeps non-tool paths and the schemas the visible tools reference, transitively, and drops the rest', () => {
    const view = JSON.parse(views().json(['a']))
    expect(Object.keys(view.paths)).toEqual(['/tools', '/tools/a'])
    expect(Object.keys(view.components.schemas).sort()).toEqual(['A', 'Shared'])
  })

  it('caches one text per distinct view', () => {
    const cache = views()
    expect(cache.json(['a'])).toBe(cache.json(['a']))
    expect(cache.json(['a'])).not.toBe(cache.json(['b']))
  })
})
