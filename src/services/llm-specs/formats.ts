import type { AnyTool } from '../../core/tool.js'
import type { NamedTool } from '../../core/bundles/named-tool.js'
import { mcpToolAs, takesObjectInput } from '../mcp/tool-spec.js'
import { effectsText, listingOf } from '../tool-listing.js'
import type { NameMap, SpecFormat } from './names.js'
import { NotStrictable, strictSchemaOf } from './strict-schema.js'

export interface SpecOptions {
  readonly defaultTimeoutMs: number
  /** OpenAI strict mode (both OpenAI formats); other providers ignore it. */
  readonly strict: boolean
  readonly names: NameMap
}

/**
 * The caller's tools as the `tools` field of one provider's request body, ready to paste:
 * OpenAI Chat Completions (`openai`), OpenAI Responses (`openai-responses`), Anthropic
 * Messages (`anthropic`), Gemini `generateContent` (`gemini`), or MCP's `tools/list` result.
 * The same listing feeds every format, so the JSON Schemas are the REST route's.
 */
export function specsOf (format: SpecFormat, all: readonly NamedTool[], options: SpecOptions): { tools: Array<Record<string, unknown>> } {
  const tools = all.filter(named => takesObjectInput(named.tool, options.defaultTimeoutMs))
  if (format === 'mcp') return { tools: tools.map(named => ({ ...mcpToolAs(named, options.defaultTimeoutMs) })) }
  const entries = tools.map(({ name, description, tool }) => {
    const listing = listingOf(tool, options.defaultTimeoutMs)
    // A bundle's alias is a tool id's shape, which every provider takes as it is.
    return { name: name !== tool.id ? name : options.names.toName.get(tool.id) ?? tool.id, description: modelDescriptionOf(tool, description), schema: listing.inputSchema }
  })
  switch (format) {
    case 'openai': return { tools: entries.map(e => ({ type: 'function', function: { name: e.name, description: e.description, ...parametersOf(e.schema, options.strict) } })) }
    case 'openai-responses': return { tools: entries.map(e => ({ type: 'function', name: e.name, description: e.description, ...parametersOf(e.schema, options.strict) })) }
    case 'anthropic': return { tools: entries.map(e => ({ name: e.name, description: e.description, input_schema: e.schema })) }
    case 'gemini': return { tools: [{ functionDeclarations: entries.map(e => ({ name: e.name, description: e.description, parametersJsonSchema: e.schema })) }] }
  }
}

/** A tool that changes state says what it may do: the model reads its effects (a signal, never a gate). */
function modelDescriptionOf (tool: AnyTool, description: string): string {
  return tool.isReadOnly ? description : `${description}\n\n${effectsText(tool)}`
}

/** OpenAI's `parameters` and `strict`: a schema with no strict form goes out with `strict: false`. */
function parametersOf (schema: Record<string, unknown>, strict: boolean): { parameters: Record<string, unknown>, strict: boolean } {
  if (!strict) return { parameters: schema, strict: false }
  try {
    return { parameters: strictSchemaOf(schema), strict: true }
  } catch (error) {
    if (error instanceof NotStrictable) return { parameters: schema, strict: false }
    throw error
  }
}
