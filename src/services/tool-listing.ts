import { z } from 'zod'
import { toJsonSchema, type ToolSchema } from '../core/schema.js'
import type { AnyTool } from '../core/tool.js'

/** One entry of `GET /tools`: everything a caller or a model needs to choose and call a tool. */
export const ToolListingSchema = z.object({
  id: z.string(),
  name: z.string().optional().describe('In a bundle that names the tool otherwise: the name to call it by there (`description` is the bundle\'s too); absent: its id'),
  kind: z.string(),
  description: z.string(),
  shortDescription: z.string(),
  effects: z.array(z.string()).describe('Declared side effects, sorted; empty when none are declared'),
  flags: z.object({
    readOnly: z.boolean(),
    concurrencySafe: z.boolean(),
    interactive: z.boolean(),
    supportsEscalation: z.boolean(),
    requiresIdempotencyKey: z.boolean(),
  }),
  timeoutMs: z.number().nullable().describe('Hard timeout in ms; null for an interactive tool with no timeout'),
  inputSchema: z.record(z.string(), z.unknown()).describe('JSON Schema (2020-12) of the request body'),
  outputSchema: z.record(z.string(), z.unknown()).describe('JSON Schema (2020-12) of the 200 response'),
  errors: z.array(z.object({ status: z.number().int(), code: z.string(), description: z.string() })).optional()
    .describe('Present when the tool declares its own failures: each status and code it may answer, and why'),
  origin: z.object({
    type: z.string().describe('`mcp`: a tool of an upstream MCP server; `openapi`: an operation of an HTTP service'),
    server: z.string().describe('The upstream\'s name in the upstreams file'),
    name: z.string().describe('The tool\'s own name on the upstream (an operation\'s operationId, or `{method} {path}`)'),
    method: z.string().optional().describe('An operation\'s HTTP method'),
    path: z.string().optional().describe('An operation\'s path template, as its document writes it'),
    credential: z.enum(['client_credentials', 'token_exchange', 'link', 'identity']).optional().describe('How calls reach the upstream beyond its static headers: the gateway\'s own OAuth token, the caller\'s token exchanged, or the caller asserted; absent: the static headers alone'),
    declaredBy: z.record(z.string(), z.enum(['operator', 'upstream', 'default'])).describe('Who declared each field: the operator\'s `tools` entry, the upstream (an MCP server\'s annotations, untrusted hints; a service\'s document), or the default'),
  }).optional().describe('Present for a tool the gateway fronts: where it really runs'),
}).meta({ id: 'ToolListing' })
export type ToolListing = z.output<typeof ToolListingSchema>

const listings = new WeakMap<AnyTool, ToolListing>()

/** The listing of a tool, computed once per tool: JSON Schema generation is not per-request work. */
export function listingOf (tool: AnyTool, defaultTimeoutMs: number): ToolListing {
  let listing = listings.get(tool)
  if (listing === undefined) {
    const timeout = tool.timeoutMs ?? defaultTimeoutMs
    listing = Object.freeze({
      id: tool.id,
      kind: tool.kind,
      description: tool.description,
      shortDescription: summaryOf(tool),
      effects: [...tool.effects],
      flags: {
        readOnly: tool.isReadOnly,
        concurrencySafe: tool.isConcurrencySafe,
        interactive: tool.interactive === true,
        supportsEscalation: tool.supportsEscalation === true,
        requiresIdempotencyKey: tool.requiresIdempotencyKey === true,
      },
      timeoutMs: timeout === Infinity ? null : timeout,
      inputSchema: jsonSchemaOf(tool.inputSchema, 'input'),
      outputSchema: jsonSchemaOf(tool.outputSchema, 'output'),
      ...(tool.errors.length === 0 ? {} : { errors: tool.errors.map(({ status, code, description }) => ({ status, code, description })) }),
      ...(tool.origin === undefined ? {} : { origin: { ...tool.origin, declaredBy: { ...tool.origin.declaredBy } } }),
    })
    listings.set(tool, listing)
  }
  return listing
}

/** `shortDescription`, else the description's first sentence. */
export function summaryOf (tool: AnyTool): string {
  if (tool.shortDescription !== undefined) return tool.shortDescription
  return firstSentenceOf(tool.description)
}

/** A description's first sentence (the whole of it when it has no sentence end). */
export function firstSentenceOf (text: string): string {
  const first = /^(.+?[.!?])(\s|$)/s.exec(text)
  return (first?.[1] ?? text).trim()
}

/** How the effects read for a person: "Effects: financial, irreversible." or "(none declared)". */
export function effectsText (tool: AnyTool): string {
  return tool.effects.length === 0 ? 'Effects: none declared.' : `Effects: ${tool.effects.join(', ')}.`
}

/**
 * The JSON Schema (2020-12, no `$schema`) of a tool's input or output, whatever kind of schema
 * declared it: listings, OpenAPI, MCP and the LLM exports all take it from here.
 * @internal exported for its tests, not for the package
 */
export function jsonSchemaOf (schema: ToolSchema, io: 'input' | 'output'): Record<string, unknown> {
  return toJsonSchema(schema, io)
}
