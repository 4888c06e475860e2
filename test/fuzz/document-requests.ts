import fc from 'fast-check'
import { arbitraryFromSchema, plainJson, type FromSchemaOptions, type JsonSchema } from './arbitrary-from-schema.js'
import { brokenFromSchema } from './broken-from-schema.js'

/*
 * Requests made from the gateway's own OpenAPI document, as a client that read it would make
 * them, and as one that got it slightly or badly wrong would: valid values, near misses,
 * hostile HTTP (deep and wide bodies, text that is not JSON, the wrong media type, a parameter
 * twice, an unknown one), and MCP messages of both protocol eras, well and badly formed.
 */

type Json = Record<string, unknown>

interface Parameter { readonly name: string, readonly in: string, readonly schema?: JsonSchema }

/** One operation of the document: what a request to it is made from, and the statuses it may answer. */
export interface Operation {
  readonly method: string
  readonly path: string
  readonly parameters: readonly Parameter[]
  readonly body?: JsonSchema
  readonly statuses: ReadonlySet<string>
}

export interface FuzzRequest {
  readonly operation: Operation
  readonly method: string
  readonly url: string
  readonly headers: Record<string, string>
  readonly payload?: string
}

/** Every operation of a served document, with `$ref`s resolved (recursion cut after a few levels). */
export function operationsOf (document: Json): Operation[] {
  const components = ((document.components as Json | undefined)?.schemas ?? {}) as Record<string, JsonSchema>
  const operations: Operation[] = []
  for (const [path, item] of Object.entries(document.paths as Record<string, Record<string, Json>>)) {
    for (const [method, operation] of Object.entries(item)) {
      if (!['get', 'post', 'put', 'patch', 'delete'].includes(method)) continue
      const content = ((operation.requestBody as Json | undefined)?.content ?? {}) as Record<string, { schema?: JsonSchema }>
      const body = content['application/json']?.schema
      operations.push({
        method: method.toUpperCase(),
        path,
        parameters: ((operation.parameters ?? []) as Parameter[]).map(p => ({ ...p, schema: p.schema === undefined ? undefined : resolved(p.schema, components, 0) })),
        ...(body === undefined ? {} : { body: resolved(body, components, 0) }),
        statuses: new Set(Object.keys(operation.responses as Json)),
      })
    }
  }
  return operations
}

function resolved (schema: JsonSchema, components: Record<string, JsonSchema>, depth: number): JsonSchema {
  if (typeof schema !== 'object' || schema === null) return schema
  const ref = (schema as { $ref?: string }).$ref
  if (ref !== undefined) {
    if (depth > 3) return {}
    return resolved(components[ref.replace('#/components/schemas/', '')] ?? {}, components, depth + 1)
  }
  if (Array.isArray(schema)) return schema.map(item => resolved(item as JsonSchema, components, depth)) as unknown as JsonSchema
  return Object.fromEntries(Object.entries(schema).map(([key, value]) => [key, typeof value === 'object' && value !== null ? resolved(value as JsonSchema, components, depth) : value])) as JsonSchema
}

/** A schema's values, or any JSON where the generator does not know the schema's shape. */
function valuesOf (schema: JsonSchema | undefined, options: FromSchemaOptions = {}): fc.Arbitrary<unknown> {
  if (schema === undefined) return plainJson
  try {
    return arbitraryFromSchema(schema, options)
  } catch {
    return plainJson
  }
}

function nested (depth: number, leaf: unknown = 0): unknown {
  let value = leaf
  for (let i = 0; i < depth; i++) value = i % 2 === 0 ? [value] : { k: value }
  return value
}

/**
 * JSON texts past (or right at) the bounds that keep the gateway's recursive steps safe, as
 * text: thousands of levels are past what JSON.stringify (and a counterexample report) can
 * take as a value.
 */
export const HOSTILE_TEXTS: readonly string[] = [
  JSON.stringify(nested(63)),
  JSON.stringify(nested(64)),
  '['.repeat(5_000) + ']'.repeat(5_000),
  '{"a":'.repeat(20_000) + '1' + '}'.repeat(20_000),
  JSON.stringify(Object.fromEntries(Array.from({ length: 10_001 }, (_, i) => [`k${i}`, i]))),
  `[${'0,'.repeat(100_000)}0]`,
]

const hostileTexts: fc.Arbitrary<string> = fc.oneof(
  fc.constantFrom(...HOSTILE_TEXTS),
  fc.integer({ min: 60, max: 70 }).map(depth => JSON.stringify(nested(depth))),
)

/** A hostile text as the body of an operation: the input itself, or under `value` where the input is an open box. */
export function hostileBody (schema: JsonSchema | undefined, text: string): string {
  return schema?.properties?.value === undefined ? text : `{"value":${text}}`
}

/** A body with something wrong: one thing broken against its schema, any JSON, hostile, or text that is not JSON. */
function badBodyOf (schema: JsonSchema | undefined): fc.Arbitrary<string> {
  const valid = valuesOf(schema)
  const values: Array<fc.Arbitrary<unknown>> = [plainJson]
  if (schema?.type === 'object') values.push(brokenFromSchema(schema, valid).map(broken => broken.value))
  return fc.oneof(
    { arbitrary: fc.oneof(...values).map(value => JSON.stringify(value) ?? ''), weight: 4 },
    { arbitrary: hostileTexts.map(text => hostileBody(schema, text)), weight: 2 },
    { arbitrary: fc.constantFrom('{', '{"a":1,}', '[1,2', 'nul', '"\\ud800"', '{"__proto__":{"x":1}}', '{"constructor":{"prototype":{"x":1}}}', ''), weight: 1 },
    { arbitrary: fc.string({ unit: 'binary', maxLength: 64 }), weight: 1 },
  )
}

/** Parameter names a careless client invents: case and separator variants of real ones, and strangers. */
const strayNames = fc.constantFrom('dryrun', 'DryRun', 'dry_run', 'Mode', 'escalation', 'foo', 'idempotencyKey', 'wait')

/** Whose request it is: mostly the fuzzer's, sometimes nobody's, another principal's, or a forged key. */
function credentialOf (keys: { readonly fuzzer: string, readonly other: string }): fc.Arbitrary<Record<string, string>> {
  return fc.oneof(
    { arbitrary: fc.constant<Record<string, string>>({ 'x-api-key': keys.fuzzer }), weight: 12 },
    { arbitrary: fc.constant<Record<string, string>>({ 'x-api-key': keys.other }), weight: 1 },
    { arbitrary: fc.constant<Record<string, string>>({}), weight: 1 },
    { arbitrary: fc.constantFrom<Record<string, string>>({ 'x-api-key': 'forged-key-0123456789' }, { authorization: 'Bearer not.a.jwt' }, { authorization: 'Basic Zm9vOmJhcg==' }), weight: 1 },
  )
}

/** What a request is made of before it is sent: the parts a mutation may break, one at a time. */
interface Parts {
  readonly path: string
  readonly query: ReadonlyArray<readonly [string, string]>
  readonly headers: Readonly<Record<string, string>>
  readonly type: string
  readonly payload?: string
}

/** One thing done wrong, as careless or hostile clients do. */
type Mutation = (parts: Parts) => fc.Arbitrary<Parts>

/**
 * A request to one operation of the document: well formed (values from the document's schemas,
 * with `hints` by tool for the values a schema cannot say, like a known account), or well
 * formed but for one thing.
 */
export function requestTo (operation: Operation, keys: { readonly fuzzer: string, readonly other: string }, hints: FromSchemaOptions = {}): fc.Arbitrary<FuzzRequest> {
  const pathParams = operation.parameters.filter(p => p.in === 'path')
  const queryParams = operation.parameters.filter(p => p.in === 'query')
  const headerParams = operation.parameters.filter(p => p.in === 'header' && p.name.toLowerCase() !== 'content-type')
  const segment = (p: Parameter): fc.Arbitrary<string> => fc.oneof(valuesOf(p.schema).map(String), fc.uint8Array({ minLength: 16, maxLength: 16 }).map(bytes => Buffer.from(bytes).toString('hex')))
  const valid: fc.Arbitrary<Parts> = fc.record({
    path: fc.tuple(...pathParams.map(segment)).map(values => pathParams.reduce((path, p, i) => path.replace(`{${p.name}}`, encodeURIComponent(values[i]!)), operation.path)),
    query: fc.tuple(...queryParams.map(p => sometimes(valuesOf(p.schema).map(text)).map(value => [p.name, value] as const)))
      .map(pairs => pairs.flatMap(([name, value]) => value === undefined ? [] : [[name, value] as const])),
    headers: fc.tuple(...headerParams.map(p => sometimes(valuesOf(p.schema).map(headerText).filter(value => value !== '')).map(value => [p.name.toLowerCase(), value] as const)))
      .map(pairs => ({ 'x-api-key': keys.fuzzer, ...Object.fromEntries(pairs.filter(([, value]) => value !== undefined)) })),
    type: fc.constant('application/json'),
    payload: operation.body === undefined ? fc.constant(undefined) : valuesOf(operation.body, hints).map(value => JSON.stringify(value) ?? 'null'),
  })
  const mutations: Mutation[] = [
    parts => fc.constantFrom('1', '0', 'TRUE', 'PLAN', 'yes', '', ' true').chain(bad => fc.constantFrom(...queryParams.map(p => p.name), 'dryRun').map(name => ({ ...parts, query: [...parts.query.filter(([n]) => n !== name), [name, bad] as const] }))),
    parts => fc.tuple(strayNames, fc.constantFrom('true', 'plan', '1')).map(pair => ({ ...parts, query: [...parts.query, pair] })),
    parts => fc.constantFrom(...queryParams.map(p => p.name), 'mode').map(name => ({ ...parts, query: [...parts.query, [name, 'true'] as const, [name, 'false'] as const] })),
    parts => fc.tuple(fc.constantFrom(...headerParams.map(p => p.name.toLowerCase()), 'prefer', 'idempotency-key'), fc.constantFrom('', 'has space', 'x'.repeat(300), 'wait=abc', 'wait', 'a, b', 'wait=5, wait=x')).map(([name, bad]) => ({ ...parts, headers: { ...parts.headers, [name]: bad } })),
    parts => credentialOf(keys).map(credential => ({ ...parts, headers: { ...withoutCredentials(parts.headers), ...credential } })),
    parts => fc.constantFrom('text/plain', 'application/x-www-form-urlencoded', 'application/json; charset=latin1', 'application/jsonx').map(type => ({ ...parts, type, payload: parts.payload ?? '{}' })),
    parts => badBodyOf(operation.body).map(payload => ({ ...parts, payload })),
  ]
  const request = fc.oneof(
    { arbitrary: valid, weight: 2 },
    { arbitrary: fc.tuple(valid, fc.constantFrom(...mutations)).chain(([parts, mutate]) => mutate(parts)), weight: 3 },
  )
  return request.map(parts => {
    const qs = new URLSearchParams(parts.query.map(([name, value]): [string, string] => [name, value])).toString()
    const headers = parts.payload === undefined ? { ...parts.headers } : { ...parts.headers, 'content-type': parts.type }
    return { operation, method: operation.method, url: qs === '' ? parts.path : `${parts.path}?${qs}`, headers, ...(parts.payload === undefined ? {} : { payload: parts.payload }) }
  })
}

/** A value one time in four: the options of a call are the exception, not the rule. */
function sometimes<T> (arbitrary: fc.Arbitrary<T>): fc.Arbitrary<T | undefined> {
  return fc.oneof({ arbitrary: fc.constant(undefined), weight: 3 }, { arbitrary, weight: 1 })
}

function text (value: unknown): string {
  return typeof value === 'string' ? value : JSON.stringify(value) ?? ''
}

function headerText (value: unknown): string {
  return text(value).replace(/[^\x20-\x7e]/g, '')
}

function withoutCredentials (headers: Readonly<Record<string, string>>): Record<string, string> {
  const { 'x-api-key': _key, authorization: _authorization, ...rest } = headers
  return rest
}

const META_KEYS = ['dev.toolgate/dryRun', 'dev.toolgate/mode', 'dev.toolgate/escalate', 'dev.toolgate/idempotencyKey', 'dev.toolgate/approvalId', 'dev.toolgate/wait', 'dev.toolgate/dryrun', 'dev.toolgate/problem', 'progressToken', 'traceparent']
const metaValues = fc.oneof(fc.boolean(), fc.constantFrom('true', 'plan', 'PLAN', 'normal', 'k-1', 'has space', '', 'a'.repeat(32)), fc.integer({ min: -5, max: 100 }), fc.constant(null), fc.constant({}))

/** Arguments sent as this JSON text, spliced in where the message is serialized (see `mcpText`). */
export class RawArguments {
  constructor (readonly text: string) {}
  toJSON (): string {
    return RAW_MARK
  }
}
const RAW_MARK = '\u0000raw arguments\u0000'

/** The text of a message as sent, raw arguments spliced in. */
export function mcpText (body: unknown): string {
  const raw = (body as { params?: { arguments?: unknown } } | null)?.params?.arguments
  const text = JSON.stringify(body) ?? ''
  return raw instanceof RawArguments ? text.replace(JSON.stringify(RAW_MARK), raw.text) : text
}

export interface McpMessage {
  readonly body: unknown
  readonly headers: Record<string, string>
  /** The query string of `POST /mcp`, the REST spellings of a call's options. */
  readonly query: string
}

/** An MCP message to `POST /mcp`: tools/call above all, of either era, with any arguments and `_meta`. */
export function mcpMessage (tools: ReadonlyArray<{ readonly name: string, readonly inputSchema: JsonSchema }>, keys: { readonly fuzzer: string, readonly other: string }, hints: Readonly<Record<string, FromSchemaOptions>> = {}): fc.Arbitrary<McpMessage> {
  const name = fc.oneof({ arbitrary: fc.constantFrom(...tools.map(tool => tool.name)), weight: 8 }, { arbitrary: fc.string({ maxLength: 20 }), weight: 1 })
  const argumentsOf = (toolName: string): fc.Arbitrary<unknown> => {
    const schema = tools.find(tool => tool.name === toolName)?.inputSchema
    const valid = valuesOf(schema, hints[toolName])
    return fc.oneof(
      { arbitrary: valid, weight: 6 },
      { arbitrary: schema?.type === 'object' ? brokenFromSchema(schema, valid).map(broken => broken.value) : plainJson, weight: 2 },
      { arbitrary: hostileTexts.map(text => new RawArguments(`{"value":${text}}`)), weight: 1 },
      { arbitrary: fc.constantFrom<unknown>(null, [], 'text', 3, undefined), weight: 1 },
    )
  }
  const meta = fc.option(fc.dictionary(fc.constantFrom(...META_KEYS), metaValues, { maxKeys: 3 }), { nil: undefined, freq: 2 })
  const call = name.chain(tool => fc.record({ tool: fc.constant(tool), args: argumentsOf(tool), meta, modern: fc.boolean(), state: fc.option(fc.string({ maxLength: 40 }), { nil: undefined, freq: 6 }) }))
  const other = fc.record({ method: fc.constantFrom('tools/list', 'ping', 'initialize', 'server/discover', 'resources/list', 'nope'), modern: fc.boolean() })
  const malformed = fc.constantFrom<unknown>([], [{ jsonrpc: '2.0', id: 1, method: 'ping' }], { jsonrpc: '1.0', id: 1, method: 'ping' }, { jsonrpc: '2.0', id: {}, method: 'ping' }, { jsonrpc: '2.0', id: 1, method: 'tools/call', params: 'x' }, { jsonrpc: '2.0', method: 'notifications/cancelled', params: { requestId: 1 } }, 'null')
  const id = fc.oneof(fc.integer({ min: 0, max: 1_000 }), fc.string({ minLength: 1, maxLength: 8 }))
  const message = fc.oneof(
    { arbitrary: fc.tuple(call, id).map(([c, i]) => callMessage(c, i)), weight: 8 },
    { arbitrary: fc.tuple(other, id).map(([o, i]) => envelope({ jsonrpc: '2.0', id: i, method: o.method, params: {} }, o.modern)), weight: 1 },
    { arbitrary: malformed.map(body => ({ body, headers: LEGACY, query: '' })), weight: 1 },
  )
  const query = fc.option(fc.constantFrom('dryRun=true', 'dryRun=1', 'mode=plan', 'mode=PLAN', 'escalate=true', 'dryrun=true', 'dryRun=true&dryRun=false'), { nil: undefined, freq: 6 })
  return fc.tuple(message, credentialOf(keys), query).map(([m, credential, q]) => ({ ...m, headers: { ...m.headers, ...credential }, query: q ?? m.query }))
}

const LEGACY = { 'mcp-protocol-version': '2025-11-25' }

function callMessage (c: { tool: string, args: unknown, meta: Record<string, unknown> | undefined, modern: boolean, state: string | undefined }, id: number | string): McpMessage {
  const params: Record<string, unknown> = { name: c.tool }
  if (c.args !== undefined) params.arguments = c.args
  if (c.meta !== undefined) params._meta = c.meta
  if (c.modern && c.state !== undefined) params.requestState = c.state
  return envelope({ jsonrpc: '2.0', id, method: 'tools/call', params }, c.modern)
}

/** A message in the era asked: 2026-07-28 carries its version in `_meta` and mirrors method and name in headers. */
function envelope (message: { jsonrpc: string, id: number | string, method: string, params: Record<string, unknown> }, modern: boolean): McpMessage {
  if (!modern) return { body: message, headers: LEGACY, query: '' }
  const meta = { ...(message.params._meta as Record<string, unknown> | undefined), 'io.modelcontextprotocol/protocolVersion': '2026-07-28' }
  const name: Record<string, string> = typeof message.params.name === 'string' && /^[\x20-\x7e]*$/.test(message.params.name) ? { 'mcp-name': message.params.name } : {}
  return { body: { ...message, params: { ...message.params, _meta: meta } }, headers: { 'mcp-protocol-version': '2026-07-28', 'mcp-method': message.method, ...name }, query: '' }
}
