import { idPartOf } from '../names.js'
import type { Json, OpenApiDocument, OpenApiOperation, OpenApiParameter } from './document.js'
import { SchemaConverter } from './schema.js'

/*
 * One OpenAPI operation as a tool: one input object (path, query, header and cookie parameters
 * under their own names, the JSON or form body under `body`), its output (the 2xx JSON
 * answer), and the plan that turns an input into the request. A parameter whose name is taken
 * (by `body` or by another parameter) is renamed `{in}_{name}` (`query_id`); headers the
 * gateway owns are never parameters. What cannot be called faithfully is skipped, with why.
 */

/** How an input property reaches the request. */
interface ParameterPlan {
  /** Its name in the tool's input. */
  readonly property: string
  readonly parameter: OpenApiParameter
}

export interface OperationPlan {
  /** The operationId, or `{method} {path}` for an operation without one. */
  readonly name: string
  readonly method: string
  readonly path: string
  readonly parameters: readonly ParameterPlan[]
  /** How the body is sent, when the operation takes one. */
  readonly body?: { readonly contentType: string, readonly form: boolean, readonly required: boolean }
  /** `Accept`: JSON when any 2xx answer is JSON. */
  readonly accept: string
  readonly inputSchema: Json
  readonly outputSchema: Json
  /** The 4xx statuses the document says the operation answers, with its descriptions. */
  readonly clientErrors: ReadonlyArray<{ readonly status: number, readonly description: string }>
  readonly summary?: string
  readonly description?: string
}

export type Planned = { readonly plan: OperationPlan } | { readonly skipped: string, readonly name: string }

/**
 * Headers that are the gateway's to set: the OpenAPI rule (`Accept`, `Content-Type`,
 * `Authorization` parameters are ignored), hop-by-hop headers, framing, cookies (cookie
 * parameters set them) and trace context.
 */
const OWN_HEADERS = new Set(['accept', 'content-type', 'authorization', 'connection', 'keep-alive', 'proxy-authenticate', 'proxy-authorization', 'proxy-connection', 'te', 'trailer', 'trailers', 'transfer-encoding', 'upgrade', 'host', 'content-length', 'cookie', 'traceparent', 'tracestate', 'expect', 'forwarded', 'x-forwarded-for', 'x-forwarded-host', 'x-forwarded-proto'])

const QUERY_STYLES = new Set(['form', 'spaceDelimited', 'pipeDelimited', 'deepObject'])
const PATH_STYLES = new Set(['simple', 'label', 'matrix'])

/** A path parameter stays one segment: never empty, never a dot segment. */
const SEGMENT_RULE = { minLength: 1, not: { enum: ['.', '..'] } }
/** A header value holds no line break and no NUL. */
const HEADER_RULE = { pattern: '^[^\\r\\n\\u0000]*$' }

/**
 * The service's 4xx that mean for the gateway's operation what they meant for the service's:
 * the caller's input or standing (400, 403, 404, 409, 410, 412, 422...) or its pace (429).
 * Statuses about the request the gateway built (405 method, 406 Accept, 408 its timing, 411
 * and 413 its framing, 414 its URL, 415 its media type, 431 its headers...) would tell the
 * caller something false about `POST /tools/{id}`: they are the gateway's failure to call the
 * service (502, with `upstreamStatus`).
 */
const PASSED_THROUGH = new Set([400, 402, 403, 404, 409, 410, 412, 422, 423, 424, 429, 451])

export function passesThrough (status: number): boolean {
  return PASSED_THROUGH.has(status)
}

/** The stable code of a service's own 4xx: `UPSTREAM_404`. */
export function serviceErrorCode (status: number): string {
  return `UPSTREAM_${status}`
}

/** The name of an operation: its operationId, or its method and path. */
function operationName (operation: OpenApiOperation): string {
  return operation.operationId ?? `${operation.method} ${operation.path}`
}

/** The id part of an operation's name: `getPetById` → `get_pet_by_id`, `get /pets/{id}` → `get_pets_id`. */
export function operationIdPart (operation: OpenApiOperation): string {
  return idPartOf(operationName(operation))
}

/** Plan `operation` of `document`; `serviceHeaders` are the service's own headers (never parameters). */
export function planOperation (document: OpenApiDocument, operation: OpenApiOperation, serviceHeaders: readonly string[]): Planned {
  const name = operationName(operation)
  const skip = (why: string): Planned => ({ skipped: why, name })
  const converter = new SchemaConverter(document.root, document.dialect)
  const owned = new Set([...OWN_HEADERS, ...serviceHeaders.map(h => h.toLowerCase())])
  const kept = operation.parameters.filter(p => p.in !== 'header' || !owned.has(p.name.toLowerCase()))
  for (const p of kept) {
    if (p.contentType !== undefined && !isJson(p.contentType)) return skip(`its ${p.in} parameter "${p.name}" is sent as ${p.contentType}; only JSON content parameters are sent`)
    if (p.in === 'query' && p.style !== undefined && !QUERY_STYLES.has(p.style)) return skip(`its query parameter "${p.name}" has style "${p.style}"`)
    if (p.in === 'path' && p.style !== undefined && !PATH_STYLES.has(p.style)) return skip(`its path parameter "${p.name}" has style "${p.style}"`)
    if (p.in === 'path' && !operation.path.includes(`{${p.name}}`)) return skip(`its path parameter "${p.name}" is not in the path ${operation.path}`)
  }
  for (const template of operation.path.matchAll(/\{([^}]*)\}/g)) {
    if (!kept.some(p => p.in === 'path' && p.name === template[1])) return skip(`its path ${operation.path} has {${template[1]}}, which no path parameter declares`)
  }
  let body: OperationPlan['body']
  let bodySchema: unknown
  if (operation.requestBody !== undefined) {
    const types = Object.keys(operation.requestBody.content)
    const json = types.find(isJson)
    const type = json ?? types.find(t => t === 'application/x-www-form-urlencoded')
    if (type === undefined) {
      if (operation.requestBody.required) return skip(`its request body is ${types.join(', ') || 'of no media type'}; toolgate sends JSON and form bodies`)
    } else {
      body = { contentType: type === '*/*' ? 'application/json' : type, form: json === undefined, required: operation.requestBody.required }
      bodySchema = converter.convert(operation.requestBody.content[type]!.schema ?? {})
    }
  }
  // Path parameters first: they keep their names; then query, header, cookie.
  const order = { path: 0, query: 1, header: 2, cookie: 3 }
  const taken = new Set(body === undefined ? [] : ['body'])
  const parameters: ParameterPlan[] = []
  const properties: Json = {}
  const required: string[] = []
  for (const parameter of [...kept].sort((a, b) => order[a.in] - order[b.in])) {
    let property = parameter.name
    if (taken.has(property) || (parameter.in === 'header' && [...taken].some(t => t.toLowerCase() === property.toLowerCase()))) property = `${parameter.in}_${parameter.name}`
    if (taken.has(property)) return skip(`its ${parameter.in} parameter "${parameter.name}" clashes with another even as "${property}"`)
    taken.add(property)
    parameters.push({ property, parameter })
    const schema = converter.convert(parameter.schema ?? {})
    const rule = parameter.in === 'path' ? SEGMENT_RULE : parameter.in === 'header' || parameter.in === 'cookie' ? HEADER_RULE : undefined
    properties[property] = {
      ...(rule === undefined ? asObject(schema) : { allOf: [schema, rule] }),
      ...(parameter.description === undefined ? {} : { description: parameter.description }),
      ...(parameter.deprecated === true ? { deprecated: true } : {}),
    }
    if (parameter.required) required.push(property)
  }
  if (body !== undefined) {
    properties.body = { ...asObject(bodySchema), ...(operation.requestBody?.description === undefined ? {} : { description: operation.requestBody.description }) }
    if (body.required) required.push('body')
  }
  const output = outputOf(operation, converter)
  const defs = converter.defs
  // An answer that is one named schema is that schema at the top (MCP and typed clients want `type: object` there).
  const named = Object.keys(output.schema).length === 1 && typeof output.schema.$ref === 'string' ? defs[output.schema.$ref.slice('#/$defs/'.length)] : undefined
  if (typeof named === 'object' && named !== null) output.schema = { ...named as Json }
  const withDefs = (schema: Json): Json => Object.keys(defs).length === 0 ? schema : { ...schema, $defs: defs }
  return {
    plan: {
      name,
      method: operation.method.toUpperCase(),
      path: operation.path,
      parameters,
      ...(body === undefined ? {} : { body }),
      accept: output.json ? 'application/json' : '*/*',
      inputSchema: withDefs({ type: 'object', properties, ...(required.length === 0 ? {} : { required }), additionalProperties: false }),
      outputSchema: withDefs(output.schema),
      clientErrors: Object.entries(operation.responses).filter(([status]) => /^4\d\d$/.test(status)).map(([status, response]) => ({ status: Number(status), description: response.description?.trim() ?? '' })),
      ...(operation.summary === undefined ? {} : { summary: operation.summary }),
      ...(operation.description === undefined ? {} : { description: operation.description }),
    },
  }
}

/**
 * What a 2xx answer is: its JSON schema; `null` for an answer with no body; a string for
 * text. Several 2xx answers: any of them. None documented: any JSON value.
 */
function outputOf (operation: OpenApiOperation, converter: SchemaConverter): { schema: Json, readonly json: boolean } {
  const shapes: Json[] = []
  let json = false
  for (const [status, response] of Object.entries(operation.responses)) {
    if (!/^2(\d\d|XX)$/i.test(status)) continue
    const types = Object.keys(response.content ?? {})
    const type = types.find(isJson)
    if (type !== undefined) {
      json = true
      shapes.push(asObject(converter.convert(response.content![type]!.schema ?? {})))
    } else if (types.length === 0) shapes.push({ type: 'null' })
    else shapes.push({ type: 'string' })
  }
  const distinct = [...new Map(shapes.map(s => [JSON.stringify(s), s])).values()]
  if (distinct.length === 0) return { schema: {}, json: true }
  return { schema: distinct.length === 1 ? distinct[0]! : { anyOf: distinct }, json }
}

// application/json, application/...+json (parameters aside), or any type.
export function isJson (type: string): boolean {
  const bare = type.split(';')[0]!.trim().toLowerCase()
  return bare === 'application/json' || bare === '*/*' || /^application\/[\w.+-]*\+json$/.test(bare)
}

function asObject (schema: unknown): Json {
  if (schema === false) return { not: {} }
  return typeof schema === 'object' && schema !== null ? schema as Json : {}
}
