import SwaggerParser from '@apidevtools/swagger-parser'
import { ConfigError } from '../../config.js'

/*
 * An OpenAPI document as toolgate reads it: parsed (JSON or YAML, a file or a URL), every
 * external `$ref` bundled in by a maintained parser, internal `$ref`s kept (so recursive
 * schemas stay finite), then walked into one record per operation. Only 3.0 and 3.1.
 */

export type Json = Record<string, unknown>

const METHODS = ['get', 'put', 'post', 'delete', 'options', 'head', 'patch', 'trace'] as const
type Method = typeof METHODS[number]

export interface OpenApiParameter {
  readonly name: string
  readonly in: 'path' | 'query' | 'header' | 'cookie'
  readonly required: boolean
  readonly description?: string
  readonly deprecated?: boolean
  readonly schema?: Json
  /** `content` instead of `schema`: the value is sent as that media type (JSON). */
  readonly contentType?: string
  readonly style?: string
  readonly explode?: boolean
}

export interface OpenApiOperation {
  readonly method: Method
  readonly path: string
  readonly operationId?: string
  readonly summary?: string
  readonly description?: string
  readonly deprecated: boolean
  readonly parameters: readonly OpenApiParameter[]
  readonly requestBody?: { readonly required: boolean, readonly content: Readonly<Record<string, { readonly schema?: Json }>>, readonly description?: string }
  readonly responses: Readonly<Record<string, { readonly description?: string, readonly content?: Readonly<Record<string, { readonly schema?: Json }>> }>>
}

export interface OpenApiDocument {
  /** `3.0` or `3.1`: the schema dialect differs (`nullable`, boolean `exclusiveMinimum`). */
  readonly dialect: '3.0' | '3.1'
  readonly title: string
  /** The whole bundled document: schemas' internal `$ref`s point into it. */
  readonly root: Json
  /** The document's first server URL, when it has one. */
  readonly serverUrl?: string
  readonly operations: readonly OpenApiOperation[]
}

const READ_TIMEOUT_MS = 10_000
/** The largest document read from a URL. */
const MAX_DOCUMENT_BYTES = 20 * 1024 * 1024

/** A document URL's body, as text: at most `MAX_DOCUMENT_BYTES`, within `READ_TIMEOUT_MS`. */
async function readBounded (url: string): Promise<string> {
  const response = await fetch(url, { signal: AbortSignal.timeout(READ_TIMEOUT_MS), headers: { accept: 'application/json, application/yaml;q=0.9, */*;q=0.5' } })
  if (!response.ok || response.body === null) throw new Error(`HTTP ${response.status}`)
  const chunks: Uint8Array[] = []
  let size = 0
  for await (const chunk of response.body as AsyncIterable<Uint8Array>) {
    size += chunk.byteLength
    if (size > MAX_DOCUMENT_BYTES) throw new Error(`larger than ${MAX_DOCUMENT_BYTES} bytes`)
    chunks.push(chunk)
  }
  return Buffer.concat(chunks).toString('utf8')
}

/** Read, bundle and walk the document of service `service`. Throws a `ConfigError` naming the service. */
export async function readOpenApiDocument (service: string, location: string): Promise<OpenApiDocument> {
  const fail = (problem: string): never => { throw new ConfigError(`openapi service "${service}": its document ${location} ${problem}`) }
  let root: Json
  try {
    const remote = /^https?:\/\//i.test(location)
    root = await SwaggerParser.bundle(location, {
      resolve: {
        // The operator named this URL, loopback or not: the gateway reads it itself (bounded). A
        // `$ref` inside the document goes through the parser's resolver, which refuses internal addresses.
        ...(remote ? { operator: { order: 0, canRead: (file: { url: string }) => file.url === location, read: async () => await readBounded(location) } } : {}),
        http: { timeout: READ_TIMEOUT_MS, redirects: 3, withCredentials: false },
      },
      timeoutMs: READ_TIMEOUT_MS,
    } as SwaggerParser.Options) as unknown as Json
  } catch (error) {
    return fail(`cannot be read or parsed: ${firstLine(error)}`)
  }
  const version = typeof root.openapi === 'string' ? root.openapi : typeof root.swagger === 'string' ? `swagger ${root.swagger}` : 'no version'
  const dialect = /^3\.0\.\d+$/.test(version) ? '3.0' : /^3\.1\.\d+$/.test(version) ? '3.1' : undefined
  if (dialect === undefined) return fail(`is ${version}: only OpenAPI 3.0 and 3.1 documents are read`)
  const operations: OpenApiOperation[] = []
  const paths = objectOr(root.paths)
  for (const [path, rawItem] of Object.entries(paths)) {
    const item = deref(root, rawItem)
    const shared = arrayOr(item.parameters).map(p => deref(root, p))
    for (const method of METHODS) {
      if (item[method] === undefined) continue
      const operation = deref(root, item[method])
      operations.push(operationOf(root, method, path, operation, shared))
    }
  }
  const info = objectOr(root.info)
  const server = arrayOr(root.servers).map(s => deref(root, s))[0]
  return {
    dialect,
    title: typeof info.title === 'string' ? info.title : service,
    root,
    ...(server === undefined ? {} : { serverUrl: serverUrlOf(server, location) }),
    operations,
  }
}

function operationOf (root: Json, method: Method, path: string, operation: Json, shared: readonly Json[]): OpenApiOperation {
  // Operation parameters override path-level ones of the same name and location.
  const byKey = new Map<string, Json>()
  for (const parameter of [...shared, ...arrayOr(operation.parameters).map(p => deref(root, p))]) {
    byKey.set(`${String(parameter.in)}:${String(parameter.name)}`, parameter)
  }
  const parameters: OpenApiParameter[] = []
  for (const p of byKey.values()) {
    if (typeof p.name !== 'string' || !['path', 'query', 'header', 'cookie'].includes(p.in as string)) continue
    const content = objectOr(p.content)
    const [contentType, media] = Object.entries(content)[0] ?? []
    parameters.push({
      name: p.name,
      in: p.in as OpenApiParameter['in'],
      required: p.in === 'path' || p.required === true,
      ...(typeof p.description === 'string' ? { description: p.description } : {}),
      ...(p.deprecated === true ? { deprecated: true } : {}),
      ...(isObject(p.schema) ? { schema: p.schema } : {}),
      ...(contentType === undefined ? {} : { contentType, ...(isObject(objectOr(media).schema) ? { schema: objectOr(media).schema as Json } : {}) }),
      ...(typeof p.style === 'string' ? { style: p.style } : {}),
      ...(typeof p.explode === 'boolean' ? { explode: p.explode } : {}),
    })
  }
  const body = operation.requestBody === undefined ? undefined : deref(root, operation.requestBody)
  const responses: Record<string, { description?: string, content?: Record<string, { schema?: Json }> }> = {}
  for (const [status, raw] of Object.entries(objectOr(operation.responses))) {
    const response = deref(root, raw)
    responses[status] = {
      ...(typeof response.description === 'string' ? { description: response.description } : {}),
      ...(isObject(response.content) ? { content: mediaOf(root, response.content) } : {}),
    }
  }
  return {
    method,
    path,
    ...(typeof operation.operationId === 'string' && operation.operationId !== '' ? { operationId: operation.operationId } : {}),
    ...(typeof operation.summary === 'string' ? { summary: operation.summary } : {}),
    ...(typeof operation.description === 'string' ? { description: operation.description } : {}),
    deprecated: operation.deprecated === true,
    parameters,
    ...(body === undefined ? {} : { requestBody: { required: body.required === true, content: mediaOf(root, body.content), ...(typeof body.description === 'string' ? { description: body.description } : {}) } }),
    responses,
  }
}

function mediaOf (root: Json, content: unknown): Record<string, { schema?: Json }> {
  const out: Record<string, { schema?: Json }> = {}
  for (const [type, media] of Object.entries(objectOr(content))) {
    const m = deref(root, media)
    out[type.toLowerCase()] = isObject(m.schema) ? { schema: m.schema } : {}
  }
  return out
}

/** The first server's URL, its variables at their defaults, relative to the document's own URL. */
function serverUrlOf (server: Json, location: string): string | undefined {
  if (typeof server.url !== 'string') return undefined
  const variables = objectOr(server.variables)
  const url = server.url.replace(/\{([^}]+)\}/g, (match, name: string) => {
    const fallback = objectOr(variables[name]).default
    return typeof fallback === 'string' ? fallback : match
  })
  try {
    return /^https?:\/\//i.test(location) ? new URL(url, location).href : new URL(url).href
  } catch {
    return undefined
  }
}

/** A `$ref` object resolved within the bundled document (a chain of them too), or the object itself. */
function deref (root: Json, value: unknown, depth = 0): Json {
  const object = objectOr(value)
  if (typeof object.$ref !== 'string' || depth > 32) return object
  return deref(root, pointerIn(root, object.$ref), depth + 1)
}

/** The value at a local `#/...` JSON pointer, or undefined. */
export function pointerIn (root: Json, ref: string): unknown {
  if (!ref.startsWith('#')) return undefined
  let at: unknown = root
  for (const raw of ref.slice(1).split('/').slice(1)) {
    const key = decodeURIComponent(raw).replaceAll('~1', '/').replaceAll('~0', '~')
    if (!isObject(at) && !Array.isArray(at)) return undefined
    at = (at as Record<string, unknown>)[key]
  }
  return at
}

export function isObject (value: unknown): value is Json {
  return typeof value === 'object' && value !== null && !Array.isArray(value)
}

function objectOr (value: unknown): Json {
  return isObject(value) ? value : {}
}

function arrayOr (value: unknown): unknown[] {
  return Array.isArray(value) ? value : []
}

function firstLine (error: unknown): string {
  const message = error instanceof Error ? error.message : String(error)
  return message.split('\n')[0]!.trim().slice(0, 300)
}
