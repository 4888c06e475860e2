import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { Client } from '@modelcontextprotocol/sdk/client/index.js'
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js'
import type { FastifyInstance } from 'fastify'
import { buildApp } from '../../plugins/app.js'
import { loadConfig } from '../../src/services/config.js'
import { API_KEYS, KEYS } from '../approvals/helpers.js'
import { SLOW } from '../slow.js'
import { petstore, startPrism, tempDir, upstreamsFile, type Prism } from './helpers.js'

/*
 * HTTP APIs nobody here wrote, behind the gateway: Prism mocks the petstore documents of
 * @readme/oas-examples (one OpenAPI 3.0, one 3.1) and checks every request it gets against
 * them (a request off the document answers 422, one without the document's credentials 401),
 * so a 200 here is a request built the way the document says.
 */

const prisms: Prism[] = []
let app: FastifyInstance
let url: string
const alice = { 'x-api-key': KEYS.alice }
const SERVICE_KEY = 'petstore-service-key-0123'
const auditLog = join(tempDir(), 'audit.log')

beforeAll(async () => {
  const [old, modern] = await Promise.all([startPrism(petstore('3.0')), startPrism(petstore('3.1'))])
  prisms.push(old!, modern!)
  process.env.TOOLGATE_TEST_PET_KEY = SERVICE_KEY
  const headers = { api_key: '${TOOLGATE_TEST_PET_KEY}', Authorization: 'Bearer ${TOOLGATE_TEST_PET_KEY}' }
  const file = upstreamsFile({
    openapi: {
      pets: { document: petstore('3.0'), baseUrl: old!.url, headers },
      pets31: { document: petstore('3.1'), baseUrl: modern!.url, headers, include: ['get*', 'find*', 'placeOrder', 'loginUser'] },
      bare: { document: petstore('3.0'), baseUrl: old!.url, include: ['getInventory'] },
    },
    tools: {
      pets_place_order: { requiresApproval: 'input.body.quantity > 10' },
    },
  })
  app = await buildApp({ config: loadConfig({}, { apiKeys: API_KEYS, upstreamsFile: file, auditLog, auditLogInputs: true }), tools: [] })
  url = await app.listen({ host: '127.0.0.1', port: 0 })
}, SLOW.PROCESS_MS)

afterAll(async () => {
  delete process.env.TOOLGATE_TEST_PET_KEY
  await app?.close()
  for (const prism of prisms) prism.stop()
})

const post = async (tool: string, body: unknown, headers: Record<string, string> = {}) =>
  await app.inject({ method: 'POST', url: `/tools/${tool}`, payload: body as object, headers: { ...alice, ...headers } })

describe('OpenAPI services behind the gateway (Prism on the petstore documents)', { timeout: SLOW.PROCESS_MS }, () => {
  it('lists every chosen operation as a tool, with its method, path and who declared each flag', async () => {
    const listing = (await app.inject({ method: 'GET', url: '/tools', headers: alice })).json<{ tools: Array<Record<string, any>> }>().tools
    const ids = listing.map(tool => tool.id as string)
    expect(ids.filter(id => id.startsWith('pets_'))).toHaveLength(20)
    expect(ids.filter(id => id.startsWith('pets31_')).sort()).toEqual(['pets31_find_pets_by_status', 'pets31_find_pets_by_tags', 'pets31_get_inventory', 'pets31_get_order_by_id', 'pets31_get_pet_by_id', 'pets31_get_user_by_name', 'pets31_login_user', 'pets31_place_order'])
    const get = listing.find(tool => tool.id === 'pets_get_pet_by_id')!
    expect(get.origin).toMatchObject({ type: 'openapi', server: 'pets', name: 'getPetById', method: 'GET', path: '/pet/{petId}', declaredBy: { isReadOnly: 'default', description: 'upstream' } })
    expect(get.flags).toMatchObject({ readOnly: true, concurrencySafe: true })
    expect(get.effects).toEqual(['external'])
    const remove = listing.find(tool => tool.id === 'pets_delete_pet')!
    expect(remove.flags).toMatchObject({ readOnly: false, concurrencySafe: false })
    expect([...remove.effects].sort()).toEqual(['external', 'irreversible'])
    // The service's credential header is the gateway's to send: it is no parameter.
    expect(Object.keys(remove.inputSchema.properties)).toEqual(['petId'])
  })

  it('calls operations with path, query and body parameters on both document versions', async () => {
    for (const service of ['pets', 'pets31']) {
      const pet = await post(`${service}_get_pet_by_id`, { petId: 7 })
      expect(pet.statusCode, pet.body).toBe(200)
      expect(pet.json()).toMatchObject({ name: expect.any(String), photoUrls: expect.any(Array) })
      const found = await post(`${service}_find_pets_by_status`, { status: ['available', 'sold'] })
      expect(found.statusCode, found.body).toBe(200)
      expect(Array.isArray(found.json())).toBe(true)
      const order = await post(`${service}_place_order`, { body: { petId: 7, quantity: 1, status: 'placed' } })
      expect(order.statusCode, order.body).toBe(200)
      expect(order.json()).toMatchObject({ status: expect.any(String) })
      const login = await post(`${service}_login_user`, { username: 'ann', password: 'secret' })
      expect(login.statusCode, login.body).toBe(200)
    }
  })

  it('runs read-only operations in plan mode and refuses the others', async () => {
    const read = await app.inject({ method: 'POST', url: '/tools/pets_get_pet_by_id?mode=plan', payload: { petId: 7 }, headers: alice })
    expect(read.statusCode).toBe(200)
    const write = await app.inject({ method: 'POST', url: '/tools/pets_delete_pet?mode=plan', payload: { petId: 7 }, headers: alice })
    expect(write.statusCode).toBe(403)
    expect(write.json().code).toBe('TOOLGATE_PLAN_MODE')
  })

  it('refuses input off the document before anything is sent', async () => {
    const wrong = await post('pets_get_pet_by_id', { petId: 'seven' })
    expect(wrong.statusCode).toBe(400)
    expect(wrong.json().errors[0].pointer).toBe('/petId')
    const extra = await post('pets_get_pet_by_id', { petId: 7, admin: true })
    expect(extra.statusCode).toBe(400)
    const badEnum = await post('pets_find_pets_by_status', { status: ['lost'] })
    expect(badEnum.statusCode).toBe(400)
  })

  it('passes the service\'s own 4xx with its status and a stable code', async () => {
    // deletePet documents only 400, which Prism answers.
    const refused = await post('pets_delete_pet', { petId: 7 })
    expect(refused.statusCode).toBe(400)
    expect(refused.json()).toMatchObject({ code: 'UPSTREAM_400', upstreamStatus: 400, upstream: 'pets' })
  })

  it('a service whose credentials are missing is the operator\'s fault: 502, not the caller\'s 401', async () => {
    const refused = await post('bare_get_inventory', {})
    expect(refused.statusCode).toBe(502)
    expect(refused.json()).toMatchObject({ code: 'TOOLGATE_UPSTREAM_FAILED', detail: expect.stringContaining('credentials') })
    const served = await post('pets_get_inventory', {})
    expect(served.statusCode).toBe(200)
  })

  it('puts a write behind the operator\'s CEL approval rule: a large order waits for a person, a small one runs', async () => {
    const order = { body: { petId: 7, quantity: 50, status: 'placed' } }
    const asked = await post('pets_place_order', order)
    expect(asked.statusCode).toBe(202)
    const { id } = asked.json<{ id: string }>()
    expect((await app.inject({ method: 'POST', url: `/approvals/${id}/approve`, headers: { 'x-api-key': KEYS.bob } })).statusCode).toBe(200)
    const ran = await post('pets_place_order', order, { 'approval-id': id })
    expect(ran.statusCode, ran.body).toBe(200)
    const small = await post('pets_place_order', { body: { petId: 7, quantity: 2 } })
    expect(small.statusCode).toBe(200)
  })

  it('answers a dry run with the request it would send, the service\'s credentials redacted', async () => {
    const dry = await app.inject({ method: 'POST', url: '/tools/pets_find_pets_by_status?dryRun=true', payload: { status: ['available', 'sold'] }, headers: alice })
    expect(dry.statusCode).toBe(200)
    expect(dry.json()).toEqual({
      service: 'pets',
      method: 'GET',
      url: `${prisms[0]!.url}/pet/findByStatus?status=available&status=sold`,
      headers: { accept: 'application/json', api_key: '[redacted]', Authorization: '[redacted]' },
    })
    expect(dry.body).not.toContain(SERVICE_KEY)
  })

  it('documents each operation in the gateway\'s OpenAPI document, with no trace of the service\'s credentials', async () => {
    const document = app.openapiDocument() as { paths: Record<string, Record<string, any>> }
    const operation = document.paths['/tools/pets_place_order']!.post
    expect(operation.requestBody.content['application/json'].schema).toBeDefined()
    expect(JSON.stringify(document)).not.toContain(SERVICE_KEY)
  })

  it('exports them for every LLM provider, strict mode included', async () => {
    for (const format of ['openai', 'openai-responses', 'anthropic', 'gemini', 'mcp']) {
      for (const strict of ['false', 'true']) {
        const exported = await app.inject({ method: 'GET', url: `/tools?format=${format}&strict=${strict}`, headers: alice })
        expect(exported.statusCode, `${format} ${strict}: ${exported.body.slice(0, 300)}`).toBe(200)
        expect(exported.body).toContain('pets_place_order')
      }
    }
  })

  it('counts every call in the metrics with the operation\'s effects, and audits it with no trace of the service\'s credentials', async () => {
    await post('pets_get_pet_by_id', { petId: 9 })
    const metrics = (await app.inject({ method: 'GET', url: '/metrics' })).body
    expect(metrics).toMatch(/toolgate_tool_calls_total\{[^}]*tool="pets_get_pet_by_id"[^}]*\} [1-9]/)
    expect(metrics).toMatch(/toolgate_tool_calls_total\{[^}]*tool="pets_get_pet_by_id",kind="http",effects="external",outcome="ok"\} [1-9]/)
    await app.inject({ method: 'POST', url: '/tools/pets_place_order', payload: { body: { petId: 7, quantity: 1 } }, headers: alice })
    await app.audit!.flush()
    const audit = readFileSync(auditLog, 'utf8')
    expect(audit).toContain('"pets_place_order"')
    expect(audit).not.toContain(SERVICE_KEY)
  })

  it('serves them on POST /mcp to the MCP SDK client', async () => {
    const client = new Client({ name: 'test', version: '1.0.0' })
    await client.connect(new StreamableHTTPClientTransport(new URL(`${url}/mcp`), { requestInit: { headers: alice } }))
    const { tools } = await client.listTools()
    const listed = tools.find(tool => tool.name === 'pets31_get_pet_by_id')
    expect(listed?._meta?.['dev.toolgate/declaration']).toMatchObject({ origin: { type: 'openapi', name: 'getPetById' } })
    const result = await client.callTool({ name: 'pets31_get_pet_by_id', arguments: { petId: 3 } })
    expect(result.isError).toBeFalsy()
    expect(result.structuredContent).toMatchObject({ name: expect.any(String) })
    const refused = await client.callTool({ name: 'pets_delete_pet', arguments: { petId: 3 } })
    expect(refused.isError).toBe(true)
    await client.close()
  })
})
