import type { JsonSchema, SchemaIo } from '../../src/core/json-schema.js'
import { isZodSchema, toJsonSchema, type ToolSchema } from '../../src/core/schema.js'

/*
 * The OpenAPI side of non-zod tool schemas (Standard Schema, defineSchema): their JSON Schema
 * is already made, so zod's route transform must not see them. A JSON Schema with local
 * `$defs` (recursive ArkType or Valibot types) refers to them as `#/$defs/...`, which inside an
 * OpenAPI document would point at the document root: those definitions move to
 * `components.schemas`, named after the operation, and the references follow them.
 */

export function isForeignSchema (value: unknown): value is Exclude<ToolSchema, { _zod: unknown }> {
  return (typeof value === 'object' || typeof value === 'function') && value !== null && '~standard' in value && !isZodSchema(value)
}

interface OpenApiLike { components?: { schemas?: Record<string, unknown> } }

/** The JSON Schema of one operation's body (`input`) or response (`output`), its `$defs` hoisted into `openapiObject`. */
export function operationJsonSchema (schema: ToolSchema, io: SchemaIo, operationId: string, openapiObject: unknown): JsonSchema {
  const json = toJsonSchema(schema, io)
  const defs = json.$defs
  if (typeof defs !== 'object' || defs === null) return json
  delete json.$defs
  const nameOf = (key: string): string => `${operationId}_${io}_${key}`.replace(/[^A-Za-z0-9._-]/g, '_')
  const components = openapiObject as OpenApiLike
  components.components ??= {}
  components.components.schemas ??= {}
  for (const [key, definition] of Object.entries(defs)) components.components.schemas[nameOf(key)] = rewriteRefs(definition, nameOf)
  return rewriteRefs(json, nameOf) as JsonSchema
}

function rewriteRefs (value: unknown, nameOf: (key: string) => string): unknown {
  if (Array.isArray(value)) return value.map(item => rewriteRefs(item, nameOf))
  if (typeof value !== 'object' || value === null) return value
  const out: Record<string, unknown> = {}
  for (const [key, child] of Object.entries(value)) {
    out[key] = key === '$ref' && typeof child === 'string' && child.startsWith('#/$defs/')
      ? `#/components/schemas/${nameOf(decodeURIComponent(child.slice('#/$defs/'.length)).replaceAll('~1', '/').replaceAll('~0', '~'))}`
      : rewriteRefs(child, nameOf)
  }
  return out
}

interface ContentResponse { readonly description?: string, readonly content: Record<string, { readonly schema: unknown }> }

/** A response object (several media types) one of whose schemas is not zod. */
export function hasForeignContent (response: object): response is ContentResponse {
  const content = (response as Partial<ContentResponse>).content
  return typeof content === 'object' && content !== null && Object.values(content).some(media => isForeignSchema(media.schema))
}

/**
 * Such a response with every schema as JSON Schema (zod ones converted here too, so zod's
 * transform, which would not know the others, never sees it). Each media type's schema
 * describes what is sent, so it is the `output` side of its schema.
 */
export function contentJsonSchemas (response: ContentResponse, operationId: string, openapiObject: unknown): ContentResponse {
  const content: ContentResponse['content'] = {}
  for (const [type, media] of Object.entries(response.content)) {
    content[type] = { ...media, schema: isForeignSchema(media.schema) ? operationJsonSchema(media.schema, 'output', operationId, openapiObject) : toJsonSchema(media.schema as ToolSchema, 'output') }
  }
  return { ...response, content }
}
