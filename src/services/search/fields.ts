import type { NamedTool } from '../../core/bundles/named-tool.js'
import { listingOf } from '../tool-listing.js'

/** What the index holds of one tool, field by field (the engine weighs each by `FIELD_BOOSTS`). */
export interface ToolDocument {
  /** The tool's position in the entries: the engine's document id. */
  readonly id: number
  readonly name: string
  readonly description: string
  readonly effects: string
  /** The top-level parameter names of its input. */
  readonly params: string
  /** Their descriptions. */
  readonly paramDocs: string
}

/**
 * How much a match in each field counts, relative to the description: the engine's BM25 does
 * the ranking, these only tell it where a word says most about what a tool is for.
 */
export const FIELD_BOOSTS: Readonly<Record<Exclude<keyof ToolDocument, 'id'>, number>> = {
  name: 3,
  description: 1,
  effects: 1,
  params: 1.5,
  paramDocs: 0.5,
}

export const FIELDS = Object.keys(FIELD_BOOSTS)

/** One tool as the index reads it, under the name and description its endpoint gives it. */
export function documentOf (named: NamedTool, id: number, defaultTimeoutMs: number): ToolDocument {
  const properties = listingOf(named.tool, defaultTimeoutMs).inputSchema.properties
  const params = typeof properties === 'object' && properties !== null ? Object.entries(properties as Record<string, unknown>) : []
  return {
    id,
    name: named.name,
    description: named.description,
    effects: named.tool.effects.join(' '),
    params: params.map(([name]) => name).join(' '),
    paramDocs: params.map(([, schema]) => descriptionOf(schema)).join(' '),
  }
}

function descriptionOf (schema: unknown): string {
  const { description } = (typeof schema === 'object' && schema !== null ? schema : {}) as { description?: unknown }
  return typeof description === 'string' ? description : ''
}
