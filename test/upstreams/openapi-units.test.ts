import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import { Ajv2020 } from 'ajv/dist/2020.js'
import { parseUpstreams } from '../../src/services/upstreams/file.js'
import { planOperation, type OperationPlan } from '../../src/services/upstreams/openapi/operation.js'
import { buildRequest, encodeStrict } from '../../src/services/upstreams/openapi/request.js'
import { SchemaConverter } from '../../src/services/upstreams/openapi/schema.js'
import type { OpenApiDocument, OpenApiOperation } from '../../src/services/upstreams/openapi/document.js'
import { SLOW } from '../slow.js'

/*
 * The parts of an OpenAPI upstream that need no network: the file's `openapi` entries, the
 * schema dialects, the plan of an operation and the request it builds.
 */

const parse = (raw: unknown, env: NodeJS.ProcessEnv = {}) => parseUpstreams(raw, '/etc/up.json', env)

describe('the openapi object of the upstreams file', () => {
  it('reads a service: the document beside the file, headers from the environment as secrets', () => {
    const file = parse({ openapi: { pets: { document: './pets.json', baseUrl: 'https://api.example/v1', headers: { 'X-Key': '${KEY}' } } } }, { KEY: 'k-0123456789' })
    expect(file.services).toEqual([{ name: 'pets', document: '/etc/pets.json', baseUrl: 'https://api.example/v1', headers: { 'X-Key': 'k-0123456789' }, exclude: [], maxInFlight: 16, maxQueue: 256, secrets: ['k-0123456789', 'k-0123456789'] }])
  })

  it.each([
    [{ openapi: { pets: { document: 'p.json', bogus: 1 } } }, /openapi\.pets: unknown key "bogus"/],
    [{ openapi: { pets: {} } }, /openapi\.pets\.document/],
    [{ openapi: { pets: { document: 'p.json', baseUrl: 'ftp://x' } } }, /openapi\.pets\.baseUrl: must be an http/],
    [{ openapi: { pets: { document: 'p.json', baseUrl: 'http://x/?key=1' } } }, /openapi\.pets\.baseUrl: cannot have a query/],
    [{ openapi: { pets: { document: 'p.json', headers: { 'X-Key': '${MISSING}' } } } }, /openapi\.pets\.headers\.X-Key: \$\{MISSING\} is not set/],
    [{ openapi: { pets: { document: 'p.json', headers: { 'bad header': 'x' } } } }, /is not a header name/],
    [{ mcpServers: { pets: { command: 'x' } }, openapi: { pets: { document: 'p.json' } } }, /"pets" is also a server in mcpServers/],
    [{ openapi: { pets: { document: 'p.json' } }, rename: { 'dogs/getDog': 'get_dog' } }, /no server "dogs"/],
  ])('refuses %j naming the service and key', (raw, message) => {
    expect(() => parse(raw)).toThrow(message)
  })

  it('skips a disabled service', () => {
    expect(parse({ openapi: { pets: { document: 'p.json', disabled: true } } }).services).toEqual([])
  })
})

describe('OpenAPI schemas as JSON Schema 2020-12', () => {
  const root = {
    components: {
      schemas: {
        Node: { type: 'object', properties: { value: { type: 'integer', minimum: 0, exclusiveMinimum: true }, next: { $ref: '#/components/schemas/Node' }, label: { type: 'string', nullable: true, example: 'x' } } },
      },
    },
  }

  it('turns 3.0 spellings into JSON Schema and keeps a recursive schema finite in $defs', () => {
    const converter = new SchemaConverter(root, '3.0')
    const schema = converter.convert({ $ref: '#/components/schemas/Node' })
    expect(schema).toEqual({ $ref: '#/$defs/Node' })
    expect(converter.defs.Node).toEqual({ type: 'object', properties: { value: { type: 'integer', exclusiveMinimum: 0 }, next: { $ref: '#/$defs/Node' }, label: { type: ['string', 'null'] } } })
    const ajv = new Ajv2020({ strict: false })
    const validate = ajv.compile({ ...schema as object, $defs: converter.defs })
    expect(validate({ value: 1, next: { value: 2, label: null } })).toBe(true)
    expect(validate({ value: 0 })).toBe(false)
    expect(validate({ next: { label: 5 } })).toBe(false)
  })

  it('leaves 3.1 schemas as they are, but for documentation-only keywords', () => {
    const converter = new SchemaConverter({}, '3.1')
    expect(converter.convert({ type: ['string', 'null'], exclusiveMinimum: 3, example: 'x', 'x-vendor': 1, examples: ['a'] })).toEqual({ type: ['string', 'null'], exclusiveMinimum: 3, examples: ['a'] })
  })
})

const operation = (extra: Partial<OpenApiOperation> = {}): OpenApiOperation => ({
  method: 'get',
  path: '/things/{id}',
  operationId: 'getThing',
  deprecated: false,
  parameters: [
    { name: 'id', in: 'path', required: true, schema: { type: 'string' } },
    { name: 'id', in: 'query', required: false, schema: { type: 'string' } },
    { name: 'tags', in: 'query', required: false, schema: { type: 'array', items: { type: 'string' } } },
    { name: 'X-Trace', in: 'header', required: false, schema: { type: 'string' } },
    { name: 'Host', in: 'header', required: false, schema: { type: 'string' } },
  ],
  responses: { 200: { content: { 'application/json': { schema: { type: 'object' } } } } },
  ...extra,
})
const document = (op: OpenApiOperation): OpenApiDocument => ({ dialect: '3.0', title: 't', root: {}, operations: [op] })

function planOf (op: OpenApiOperation): OperationPlan {
  const planned = planOperation(document(op), op, [])
  if (!('plan' in planned)) throw new Error(planned.skipped)
  return planned.plan
}

describe('an operation as one input object', () => {
  it('names parameters as the document does, renames a clash as {in}_{name}, and leaves out the gateway\'s own headers', () => {
    const plan = planOf(operation())
    expect(Object.keys(plan.inputSchema.properties as object)).toEqual(['id', 'query_id', 'tags', 'X-Trace'])
    expect(plan.inputSchema.required).toEqual(['id'])
    expect(plan.inputSchema.additionalProperties).toBe(false)
  })

  it('skips what it cannot send faithfully, saying why', () => {
    const planned = planOperation(document(operation()), operation({ requestBody: { required: true, content: { 'multipart/form-data': {} } } }), [])
    expect(planned).toMatchObject({ skipped: expect.stringContaining('multipart/form-data') })
    const unbound = planOperation(document(operation()), operation({ path: '/things/{id}/{other}' }), [])
    expect(unbound).toMatchObject({ skipped: expect.stringContaining('{other}') })
  })

  it('builds the request line from declared parameters only', () => {
    const plan = planOf(operation())
    expect(buildRequest(plan, '/v1/', { id: 'a b', query_id: 'q', tags: ['x', 'y'], 'X-Trace': 't' })).toEqual({
      method: 'GET',
      target: '/v1/things/a%20b?id=q&tags=x&tags=y',
      headers: { 'X-Trace': 't' },
    })
  })

  it('never lets a path value leave its segment or a query value add a parameter (property)', () => {
    const plan = planOf(operation())
    fc.assert(fc.property(fc.string({ minLength: 1, unit: 'binary' }), fc.string({ unit: 'binary' }), (id, query) => {
      fc.pre(id !== '.' && id !== '..' && !/\p{Cs}/u.test(id + query))
      const { target } = buildRequest(plan, '/base', { id, query_id: query })
      const [path, search] = target.split('?') as [string, string]
      expect(path.split('/')).toEqual(['', 'base', 'things', encodeStrict(id)])
      expect(decodeURIComponent(path.split('/')[3]!)).toBe(id)
      expect(search.split('&')).toHaveLength(1)
      expect(new URLSearchParams(search).get('id')).toBe(query)
      expect(target).not.toMatch(/[#\s]/)
    }), { numRuns: 500 })
  }, SLOW.CPU_MS)

  it('encodes a cookie value, so it cannot add a cookie', () => {
    const plan = planOf(operation({ parameters: [{ name: 'id', in: 'path', required: true, schema: { type: 'string' } }, { name: 'sess', in: 'cookie', required: false, schema: { type: 'string' } }] }))
    expect(buildRequest(plan, '/', { id: 'a', sess: 'x; admin=1' }).headers).toEqual({ cookie: 'sess=x%3B%20admin%3D1' })
  })

  it('refuses a value that has no UTF-8 form or would move the path, naming the property', () => {
    const plan = planOf(operation())
    for (const input of [{ id: '\ud800' }, { id: 'a', tags: ['ok', '\udc00'] }, { id: '..' }]) {
      expect(() => buildRequest(plan, '/', input)).toThrow(expect.objectContaining({ code: 'TOOLGATE_INVALID_INPUT' }))
    }
  })
})
