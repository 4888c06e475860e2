import swagger from '@fastify/swagger'
import swaggerUi from '@fastify/swagger-ui'
import type { FastifyInstance } from 'fastify'
import fp from 'fastify-plugin'
import { jsonSchemaTransform, jsonSchemaTransformObject } from 'fastify-type-provider-zod'
import { ERROR_TABLE_MARKDOWN } from './error-table.js'

type Transform = typeof jsonSchemaTransform

/**
 * fastify-type-provider-zod's transform drops falsy schema members, so `x-read-only: false`
 * would vanish from the document; put the `x-` extensions back as declared.
 */
const keepFalseExtensions: Transform = document => {
  const transformed = jsonSchemaTransform(document)
  const schema = document.schema as Record<string, unknown> | undefined
  if (schema === undefined || transformed.schema === undefined) return transformed
  const extensions = Object.fromEntries(Object.entries(schema).filter(([key]) => key.startsWith('x-')))
  return { ...transformed, schema: { ...transformed.schema, ...extensions } }
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
  /** Serve the Swagger UI at /docs. */
  readonly ui: boolean
}

/**
 * The OpenAPI document, generated from the routes (so from the tool declarations) and served
 * at `/openapi.json`; Swagger UI at `/docs`. Must be registered before the routes it describes.
 */
export const openApiPlugin = fp(async function openApi (app: FastifyInstance, options: OpenApiOptions) {
  await app.register(swagger, {
    openapi: {
      openapi: '3.1.0',
      info: {
        title: 'toolgate',
        version: options.version,
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
      tags: [{ name: 'gateway', description: 'Listing, health and metadata' }],
    },
    transform: keepFalseExtensions,
    transformObject: withoutUnusedSchemas,
  })
  app.get('/openapi.json', { schema: { hide: true } }, async () => app.swagger())
  if (options.ui) {
    await app.register(swaggerUi, { routePrefix: '/docs', uiConfig: { docExpansion: 'list', deepLinking: true, tryItOutEnabled: true } })
  }
}, { name: 'toolgate-openapi' })
