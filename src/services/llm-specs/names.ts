import { ToolDefinitionError } from '../../core/errors.js'
import type { AnyTool } from '../../core/tool.js'

/**
 * Each provider's rule for a function name, from its published documentation.
 * @internal exported for its tests, not for the package
 */
export const NAME_RULES = {
  // OpenAI Chat Completions and Responses: a-z, A-Z, 0-9, underscores and dashes, at most 64.
  openai: /^[a-zA-Z0-9_-]{1,64}$/,
  'openai-responses': /^[a-zA-Z0-9_-]{1,64}$/,
  // Anthropic Messages `tools[].name`.
  anthropic: /^[a-zA-Z0-9_-]{1,64}$/,
  // Gemini FunctionDeclaration.name: starts with a letter or underscore; then letters, digits, _ . : -; at most 64.
  gemini: /^[a-zA-Z_][a-zA-Z0-9_.:-]{0,63}$/,
  mcp: /^[a-zA-Z0-9_.-]{1,128}$/,
} as const
export type SpecFormat = keyof typeof NAME_RULES
export const SPEC_FORMATS = Object.keys(NAME_RULES) as SpecFormat[]

/**
 * A provider's name for an id: the id itself when the rule takes it, else a mapped form.
 * @internal exported for its tests, not for the package
 */
export function providerNameOf (format: SpecFormat, id: string): string {
  if (NAME_RULES[format].test(id)) return id
  let name = id.replace(/[^a-zA-Z0-9_]/g, '_')
  if (!/^[a-zA-Z_]/.test(name)) name = `_${name}`
  return name.slice(0, 64)
}

/** Both directions for one provider: tool id to name, and the name a model calls back to the id. */
export interface NameMap {
  readonly toName: ReadonlyMap<string, string>
  readonly toId: ReadonlyMap<string, string>
}

/**
 * Map every id; two ids on one name would send a model's call to the wrong tool, so it throws.
 * @internal exported for its tests, not for the package
 */
export function nameMapOf (format: SpecFormat, tools: readonly AnyTool[]): NameMap {
  const toName = new Map<string, string>()
  const toId = new Map<string, string>()
  for (const tool of tools) {
    const name = providerNameOf(format, tool.id)
    const other = toId.get(name)
    if (other !== undefined) throw new ToolDefinitionError(tool.id, 'id', `maps to the ${format} function name "${name}", as tool "${other}" does; rename one`, tool.source)
    toName.set(tool.id, name)
    toId.set(name, tool.id)
  }
  return { toName, toId }
}

/** Every provider's map; a collision throws the message above (ids in the id format map to themselves, so none can). */
function nameMapsOf (tools: readonly AnyTool[]): ReadonlyMap<SpecFormat, NameMap> {
  return new Map(SPEC_FORMATS.map(format => [format, nameMapOf(format, tools)]))
}

const bySet = new WeakMap<object, ReadonlyMap<SpecFormat, NameMap>>()

/** The maps of one catalog version (a `ToolSet`), built at its first use and kept while it lives. */
export function nameMapsFor (set: { readonly tools: readonly AnyTool[] }): ReadonlyMap<SpecFormat, NameMap> {
  let maps = bySet.get(set)
  if (maps === undefined) {
    maps = nameMapsOf(set.tools)
    bySet.set(set, maps)
  }
  return maps
}
