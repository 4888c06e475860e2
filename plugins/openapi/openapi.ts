import swagger, { type FastifyDynamicSwaggerOptions } from '@fastify/swagger'
import type { FastifyInstance } from 'fastify'
import fp from 'fastify-plugin'
import { jsonSchemaTransform, jsonSchemaTransformObject } from 'fastify-type-provider-zod'
import { contentJsonSchemas, hasForeignContent, isForeignSchema, operationJsonSchema } from './foreign.js'
import { ERROR_TABLE_MARKDOWN } from './error-table.js'
import { SHARED_PROBLEMS } from '../http/problem-schemas.js'

type Transform = typeof jsonSchemaTransform

/** Parts of a route schema that many routes share by identity, converted once. */
const SHARED_PARTS = ['querystring', 'headers'] as const
const converted = new WeakMap<object, unknown>()

/**
 * The route-schema transform: fastify-type-provider-zod's, with three corrections.
 *
 * - It drops falsy members, so `x-read-only: false` would vanish: `x-` extensions are put back
 *   as declared.
 * - It converts every schema of every route afresh. Every tool shares its query and header
 *   schemas and its problem responses (the same objects), so those are converted once and
 *   reused: with 1000 tools that is most of the generation time.
 * - It drops the `headers` of a response: they are put back as declared.
 */
const transform: Transform = document => {
  const schema = document.schema as Record<string, unknown> | undefined
  if (schema === undefined) return jsonSchemaTransform(document)
  const own: Record<string, unknown> = { ...schema }
  const shared: Record<string, unknown> = {}
  // A non-zod tool schema (Standard Schema, defineSchema) already has its JSON Schema: zod's transform must not see it.
  const operationId = String(own.operationId)
  const openapiObject = (document as { openapiObject?: unknown }).openapiObject
  if (isForeignSchema(own.body)) {
    shared.body = operationJsonSchema(own.body, 'input', operationId, openapiObject)
    delete own.body
  }
  for (const part of SHARED_PARTS) {
    if (own[part] === undefined) continue
    shared[part] = once(own[part] as object, value => jsonSchemaTransform({ ...document, schema: { [part]: value } } as typeof document).schema?.[part as never])
    delete own[part]
  }
  const responses = own.response as Record<string, object> | undefined
  const sharedResponses: Record<string, unknown> = {}
  if (responses !== undefined) {
    const ownResponses: Record<string, object> = {}
    for (const [status, response] of Object.entries(responses)) {
      if (isForeignSchema(response)) sharedResponses[status] = operationJsonSchema(response, 'output', operationId, openapiObject)
      else if (hasForeignContent(response)) sharedResponses[status] = contentJsonSchemas(response, operationId, openapiObject)
      else if (isSharedProblem(response)) sharedResponses[status] = once(response, value => (jsonSchemaTransform({ ...document, schema: { response: { [status]: value } } } as typeof document).schema as { response: Record<string, unknown> }).response[status])
      else ownResponses[status] = response
    }
    own.response = ownResponses
  }
  const transformed = jsonSchemaTransform({ ...document, schema: own } as typeof document)
  const result = (transformed.schema ?? {}) as Record<string, unknown>
  const extensions = Object.fromEntries(Object.entries(schema).filter(([key]) => key.startsWith('x-')))
  const response = responses === undefined ? undefined : { ...withHeaders(result.response as Record<string, object> | undefined, responses), ...sharedResponses }
  return { ...transformed, schema: { ...result, ...shared, ...extensions, ...(response === undefined ? {} : { response }) } }
}

/** zod's transform drops a response's `headers` (plain JSON Schemas here, e.g. the 202's Location): put them back. */
function withHeaders (converted: Record<string, object> | undefined, declared: Record<string, object>): Record<string, object> | undefined {
  if (converted === undefined) return undefined
  const out: Record<string, object> = { ...converted }
  for (const [status, response] of Object.entries(declared)) {
    const headers = (response as { headers?: unknown }).headers
    if (headers !== undefined && out[status] !== undefined) out[status] = { ...out[status], headers }
  }
  return out
}

function once (key: object, convert: (value: object) => unknown): unknown {
  if (!converted.has(key)) converted.set(key, convert(key))
  return converted.get(key)
}

function isSharedProblem (response: object): boolean {
  return SHARED_PROBLEMS.has(response)
}

/** The zod transform registers an input twin of every named schema; keep only referenced ones. */
const withoutUnusedSchemas: typeof jsonSchemaTransformObject = document => {
  const object = jsonSchemaTransformObject(document) as { components?: { schemas?: Record<string, unknown> } }
  const schemas = object.components?.schemas
  if (schemas === undefined) return object as ReturnType<typeof jsonSchemaTransformObject>
  const text = JSON.stringify(object)
  for (const name of Object.keys(schemas)) {
    if (!text.includes(`"#/components/schemas/${name}"`)) delete schemas[name]
  }
  return object as ReturnType<typeof jsonSchemaTransformObject>
}

export interface OpenApiOptions {
  readonly version: string
}

/** The swagger settings of the gateway's document, shared with the generator of tool operations. */
export function swaggerSettings (version: string): FastifyDynamicSwaggerOptions {
  return {
    openapi: {
      openapi: '3.1.0',
      info: {
        title: 'toolgate',
        version,
        description: 'Every tool is its own `POST /tools/{id}` operation. Each call is authenticated, its input validated, authorized, scheduled, run under a hard timeout and its output validated. Every error is `application/problem+json` (RFC 9457).\n\n' + ERROR_TABLE_MARKDOWN,
        license: { name: 'MIT', identifier: 'MIT' },
      },
      servers: [{ url: '/', description: 'This gateway' }],
      components: {
        securitySchemes: {
          apiKey: { type: 'apiKey', in: 'header', name: 'X-Api-Key', description: 'An API key configured in API_KEYS (stored as its SHA-256 digest)' },
          bearer: { type: 'http', scheme: 'bearer', bearerFormat: 'JWT or API key' },
        },
      },
      tags: [{ name: 'gateway', description: 'Listing, health and metadata' }, { name: 'approvals', description: 'Calls waiting for a person: list, read, approve, reject' }],
    },
    transform,
    transformObject: withoutUnusedSchemas,
  }
}

/**
 * The gateway's own routes in the OpenAPI document (`app.swagger()`), whole; the operations of
 * the tools are generated per catalog version beside it (`tool-document.ts`), since the tools
 * change while the routes do not. Must be registered before the routes it describes.
 */
export const openApiPlugin = fp(async function openApi (app: FastifyInstance, options: OpenApiOptions) {
  await app.register(swagger, swaggerSettings(options.version))
  // Generate the document before the gateway serves anything: with a thousand tools it takes
  // most of a second, which must not stall the event loop (and trip the overload guard) later.
  app.addHook('onReady', async () => { app.swagger() })
  // `/openapi.json` and `/docs` are served per caller, behind authentication (caller-docs.ts).
}, { name: 'toolgate-openapi' })
