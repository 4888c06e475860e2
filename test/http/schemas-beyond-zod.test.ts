import SwaggerParser from '@apidevtools/swagger-parser'
import { describe, expect, it } from 'vitest'
import { foreignTools } from '../fixtures/foreign-schema-tools.js'
import { httpTools } from '../fixtures/http-tools.js'
import { auth, KEYS, testApp } from './helpers.js'
import { expectProblem } from './problem-shape.js'

/* Valibot, ArkType and defineSchema tools served beside the zod fixtures, over HTTP. */

const tools = [...httpTools, ...foreignTools]
const post = (id: string, payload: unknown) => ({ method: 'POST' as const, url: `/tools/${id}`, headers: { ...auth(KEYS.admin), 'content-type': 'application/json' }, payload: JSON.stringify(payload) })
const order = { sku: 'abc', lines: [{ qty: 3 }] }
const FOREIGN = ['valibot_order', 'ark_order', 'adapter_order']

describe('tools with non-zod schemas over HTTP', () => {
  for (const id of [...FOREIGN, 'mixed_order']) {
    it(`${id}: 200 with the output for valid input`, async () => {
      const app = await testApp({}, tools)
      const response = await app.inject(post(id, order))
      expect(response.statusCode).toBe(200)
      expect(response.json()).toEqual(order)
    })
  }

  for (const id of FOREIGN) {
    it(`${id}: 400 problem+json with every issue and its JSON pointer`, async () => {
      const app = await testApp({}, tools)
      const body = expectProblem(await app.inject(post(id, { sku: 'x', lines: [{ qty: 1 }, { qty: 'two' }], more: 1 })), 400, 'TOOLGATE_INVALID_INPUT')
      const errors = body.errors as Array<{ pointer: string, message: string, code: string }>
      expect(errors.map(e => e.pointer).sort()).toEqual(['/lines/1/qty', '/more', '/sku'])
      for (const issue of errors) expect(issue).toEqual({ pointer: expect.any(String), message: expect.stringMatching(/\S/), code: expect.stringMatching(/\S/) })
    })
  }

  it('a bad output of an adapter output schema is a 502, never returned (zod input, adapter output)', async () => {
    const app = await testApp({}, tools)
    const response = await app.inject(post('mixed_order', { ...order, bad: true }))
    expectProblem(response, 502, 'TOOLGATE_INVALID_OUTPUT')
    expect(response.body).not.toContain('"qty":0')
  })

  it('GET /tools/{id} shows the JSON Schema the validator gave, for input and output', async () => {
    const app = await testApp({}, tools)
    for (const id of [...FOREIGN, 'mixed_order']) {
      const listing = (await app.inject({ method: 'GET', url: `/tools/${id}`, headers: auth(KEYS.admin) })).json<{ inputSchema: Record<string, unknown>, outputSchema: Record<string, unknown> }>()
      for (const schema of [listing.inputSchema, listing.outputSchema]) {
        expect(schema, id).toMatchObject({ type: 'object', properties: { sku: { type: 'string', minLength: 3 }, lines: { type: 'array' } }, additionalProperties: false })
        expect(schema.$schema).toBeUndefined()
      }
    }
  })

  it('the OpenAPI document carries the same schemas in each operation and validates', async () => {
    const app = await testApp({}, tools)
    const document = (await app.inject({ method: 'GET', url: '/openapi.json', headers: auth(KEYS.admin) })).json<{ paths: Record<string, { post: Record<string, any> }> }>()
    for (const id of [...FOREIGN, 'mixed_order']) {
      const listing = (await app.inject({ method: 'GET', url: `/tools/${id}`, headers: auth(KEYS.admin) })).json<{ inputSchema: unknown, outputSchema: unknown }>()
      const operation = document.paths[`/tools/${id}`]!.post
      if (id !== 'mixed_order') expect(operation.requestBody.content['application/json'].schema, id).toEqual(listing.inputSchema)
      expect(operation.responses['200'].content['application/json'].schema, id).toEqual(listing.outputSchema)
    }
    await expect(SwaggerParser.validate(structuredClone(document) as never)).resolves.toBeTruthy()
  })

  it('a recursive schema: nested issues have deep pointers, and its $defs become components the operation refers to', async () => {
    const app = await testApp({}, tools)
    const tree = { value: 'root', children: [{ value: 'a', children: [{ value: 'b' }] }] }
    expect((await app.inject(post('ark_tree', tree))).json()).toEqual(tree)
    const body = expectProblem(await app.inject(post('ark_tree', { value: 'root', children: [{ value: 'a', children: [{ value: 2 }] }] })), 400, 'TOOLGATE_INVALID_INPUT')
    expect((body.errors as Array<{ pointer: string }>).map(e => e.pointer)).toEqual(['/children/0/children/0/value'])
    const document = (await app.inject({ method: 'GET', url: '/openapi.json', headers: auth(KEYS.admin) })).json<{ paths: Record<string, { post: Record<string, any> }>, components: { schemas: Record<string, unknown> } }>()
    const { $ref } = document.paths['/tools/ark_tree']!.post.requestBody.content['application/json'].schema as { $ref: string }
    expect($ref).toMatch(/^#\/components\/schemas\/ark_tree_input_/)
    expect(document.components.schemas[$ref.split('/').at(-1)!]).toMatchObject({ type: 'object', required: ['value'] })
    const dereferenced = await SwaggerParser.dereference(structuredClone(document) as never) as typeof document
    const schema = dereferenced.paths['/tools/ark_tree']!.post.requestBody.content['application/json'].schema
    expect(schema.properties.children.items.properties.value).toEqual({ type: 'string' })
  })

  it('a real client over a socket (fetch) gets the same 200 and 400 from a listening gateway', async () => {
    const app = await testApp({}, tools)
    const address = await app.listen({ host: '127.0.0.1', port: 0 })
    const call = async (id: string, body: unknown) => await fetch(`${address}/tools/${id}`, { method: 'POST', headers: { ...auth(KEYS.admin), 'content-type': 'application/json' }, body: JSON.stringify(body) })
    for (const id of FOREIGN) {
      const ok = await call(id, order)
      expect([ok.status, await ok.json()]).toEqual([200, order])
      const bad = await call(id, { sku: 'abc', lines: [{ qty: -1 }] })
      expect(bad.headers.get('content-type')).toMatch(/^application\/problem\+json/)
      expect((await bad.json() as { errors: Array<{ pointer: string }> }).errors.map(e => e.pointer)).toEqual(['/lines/0/qty'])
    }
  })
})
