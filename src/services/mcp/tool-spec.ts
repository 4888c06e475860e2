import type { AnyTool } from '../../core/tool.js'
import { isAliased, type NamedTool } from '../../core/bundles/named-tool.js'
import { listingOf, type ToolListing } from '../tool-listing.js'

/** The one namespaced `_meta` key that carries what MCP has no words for. */
const DECLARATION_META = 'dev.toolgate/declaration'

/** An entry of MCP `tools/list` (the 2025-11-25 `Tool` shape). */
export interface McpTool {
  readonly name: string
  readonly title: string
  readonly description: string
  readonly inputSchema: Record<string, unknown>
  readonly outputSchema?: Record<string, unknown>
  readonly annotations: McpToolAnnotations
  readonly _meta: Readonly<Record<string, unknown>>
}

interface McpToolAnnotations {
  readonly title: string
  readonly readOnlyHint: boolean
  readonly destructiveHint?: boolean
  readonly idempotentHint?: true
  readonly openWorldHint: boolean
}

const specs = new WeakMap<AnyTool, McpTool>()
/** A bundle's alias of a tool: the same spec under the bundle's name and description. */
const aliasSpecs = new WeakMap<NamedTool, McpTool>()

/**
 * The MCP face of a tool as one endpoint names it: under its own id, or under a bundle's alias
 * (whose `_meta` declaration still names the tool's id: the same declaration, another name).
 */
export function mcpToolAs (named: NamedTool, defaultTimeoutMs: number): McpTool {
  const spec = mcpToolOf(named.tool, defaultTimeoutMs)
  if (!isAliased(named)) return spec
  let alias = aliasSpecs.get(named)
  if (alias === undefined) {
    const title = titleOf(named.name)
    alias = Object.freeze({ ...spec, name: named.name, title, description: named.description, annotations: { ...spec.annotations, title } })
    aliasSpecs.set(named, alias)
  }
  return alias
}

/**
 * The MCP face of a tool, from its listing (the one source of its JSON Schemas), made once
 * per tool. MCP's hints default to the worst case (destructive, open world) when absent, so
 * each is set from the declaration; `idempotentHint` only where it is true: a tool that
 * changes nothing is idempotent by definition, anything else has no declared guarantee.
 */
export function mcpToolOf (tool: AnyTool, defaultTimeoutMs: number): McpTool {
  let spec = specs.get(tool)
  if (spec === undefined) {
    const listing = listingOf(tool, defaultTimeoutMs)
    const title = titleOf(tool.id)
    const annotations: McpToolAnnotations = {
      title,
      readOnlyHint: tool.isReadOnly,
      // The spec reads destructiveHint only when readOnlyHint is false.
      ...(tool.isReadOnly ? {} : { destructiveHint: tool.effects.includes('irreversible') }),
      ...(tool.isReadOnly ? { idempotentHint: true as const } : {}),
      openWorldHint: tool.effects.includes('external'),
    }
    spec = Object.freeze({
      name: tool.id,
      title,
      description: tool.description,
      inputSchema: objectSchema(listing.inputSchema),
      // MCP output schemas describe an object (structuredContent); other outputs travel as text only.
      ...(isObjectSchema(listing.outputSchema) ? { outputSchema: listing.outputSchema } : {}),
      annotations,
      _meta: { [DECLARATION_META]: declarationOf(listing) },
    })
    specs.set(tool, spec)
  }
  return spec
}

/**
 * True when a model can call the tool with function-call arguments: MCP and every provider
 * pass arguments as one JSON object, so a tool whose input is a string, an array or a number
 * is left out of those listings (REST still serves it).
 */
export function takesObjectInput (tool: AnyTool, defaultTimeoutMs: number): boolean {
  const type = listingOf(tool, defaultTimeoutMs).inputSchema.type
  return type === undefined || type === 'object'
}

/** Everything the declaration says, as the REST listing says it: one vocabulary for both faces. */
function declarationOf (listing: ToolListing): Record<string, unknown> {
  return {
    id: listing.id,
    kind: listing.kind,
    shortDescription: listing.shortDescription,
    effects: listing.effects,
    flags: listing.flags,
    timeoutMs: listing.timeoutMs,
    outputSchema: listing.outputSchema,
    ...(listing.errors === undefined ? {} : { errors: listing.errors }),
    // A fronted tool: its upstream, its own name there, and who declared each field.
    ...(listing.origin === undefined ? {} : { origin: listing.origin }),
  }
}

/** `get_status` reads as "Get status". */
function titleOf (id: string): string {
  const words = id.replaceAll('_', ' ')
  return words.charAt(0).toUpperCase() + words.slice(1)
}

function isObjectSchema (schema: Record<string, unknown>): boolean {
  return schema.type === 'object'
}

/** MCP requires `type: "object"` on input schemas; a schema without a type gets it stated. */
function objectSchema (schema: Record<string, unknown>): Record<string, unknown> {
  return schema.type === undefined ? { type: 'object', ...schema } : schema
}
