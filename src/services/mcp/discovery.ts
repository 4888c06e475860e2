import { GatewayError } from '../../core/errors.js'
import { invalidInput, toJsonPointer } from '../../core/input-issues.js'
import { isAliased, type NamedTool } from '../../core/bundles/named-tool.js'
import { queryOf, SEARCH_LIMIT } from '../search/query.js'
import { toolSearchOf } from '../search/tool-search.js'
import { summaryOf } from '../tool-listing.js'
import { mcpToolAs, takesObjectInput } from './tool-spec.js'

/**
 * What discovery mode answers, without the protocol around it: the tools a search finds, the
 * entry of one tool, the call one `call_tool` stands for. Bad arguments throw the 400 REST
 * would answer (`TOOLGATE_INVALID_INPUT`, each issue with its pointer); a tool the caller may
 * not see is unknown, worded exactly as one that does not exist.
 */

/** One endpoint's tools as one caller sees them. */
export interface DiscoveryView {
  /** Every tool the endpoint names, the same array while they do not change (the index is per array). */
  readonly all: readonly NamedTool[]
  /** The tools this caller may see and call (`tools/list`'s, before discovery). */
  readonly visible: readonly NamedTool[]
  readonly defaultTimeoutMs: number
}

/** The result JSON of `search_tools`: the best visible tools for the query's words. */
export function searchResult (args: Record<string, unknown>, view: DiscoveryView): string {
  onlyKeys(args, ['query', 'limit'])
  const query = queryOf(args.query)
  const limit = limitOf(args.limit)
  const shown = shownOf(view)
  const hits = toolSearchOf(view.all, view.defaultTimeoutMs).search(query, { limit, visible: named => shown.has(named) })
  const tools = hits.map(({ named }) => ({
    name: named.name,
    // An alias is described by its endpoint only; a tool under its own id, by its one line.
    description: isAliased(named) ? named.description : summaryOf(named.tool),
    effects: [...named.tool.effects],
    readOnly: named.tool.isReadOnly,
  }))
  return structured({ tools })
}

/** The result JSON of `describe_tool`: the tool's whole `tools/list` entry. */
export function describeResult (args: Record<string, unknown>, view: DiscoveryView): string {
  onlyKeys(args, ['name'])
  const name = nameOf(args.name)
  const named = view.visible.find(entry => entry.name === name && takesObjectInput(entry.tool, view.defaultTimeoutMs))
  if (named === undefined) throw unknownTool(name)
  return structured(mcpToolAs(named, view.defaultTimeoutMs))
}

/** The tool a `call_tool` names and the arguments it passes on (none: `{}`, as a direct call's). */
export function callOf (args: Record<string, unknown>): { readonly name: string, readonly arguments: Record<string, unknown> } {
  onlyKeys(args, ['name', 'arguments'])
  const name = nameOf(args.name)
  const inner = args.arguments ?? {}
  if (typeof inner !== 'object' || inner === null || Array.isArray(inner)) throw invalid('/arguments', 'arguments must be an object (the tool\'s arguments)', 'invalid_type')
  return { name, arguments: inner as Record<string, unknown> }
}

/** A discovery tool's own arguments: an object (absent: none). */
export function argumentsOf (raw: unknown): Record<string, unknown> {
  if (raw === undefined) return {}
  if (typeof raw !== 'object' || raw === null || Array.isArray(raw)) throw invalid('', 'arguments must be an object', 'invalid_type')
  return raw as Record<string, unknown>
}

/** What `tools/call` of an unknown tool answers through discovery: REST's 404 for it. */
export function unknownTool (name: string): GatewayError {
  return new GatewayError('TOOLGATE_NOT_FOUND', `no tool "${name}"`)
}

/** The visible tools that take function-call arguments: what `tools/list` would show. */
function shownOf (view: DiscoveryView): Set<NamedTool> {
  return new Set(view.visible.filter(named => takesObjectInput(named.tool, view.defaultTimeoutMs)))
}

function structured (value: unknown): string {
  const json = JSON.stringify(value)
  return `{"content":[{"type":"text","text":${JSON.stringify(json)}}],"structuredContent":${json},"isError":false}`
}

function nameOf (raw: unknown): string {
  if (typeof raw !== 'string' || raw.length === 0 || raw.length > 128) throw invalid('/name', 'name must be a tool\'s name as search_tools gave it', 'invalid_type')
  return raw
}

function limitOf (raw: unknown): number {
  if (raw === undefined) return SEARCH_LIMIT.default
  if (typeof raw !== 'number' || !Number.isInteger(raw) || raw < 1 || raw > SEARCH_LIMIT.max) throw invalid('/limit', `limit must be a whole number from 1 to ${SEARCH_LIMIT.max}`, 'invalid_type')
  return raw
}

/** Strict schemas: a key the tool does not take is refused, not ignored (a misspelt `querry` must not search nothing). */
function onlyKeys (args: Record<string, unknown>, known: readonly string[]): void {
  const unknown = Object.keys(args).filter(key => !known.includes(key))
  if (unknown.length > 0) throw invalidInput(...unknown.map(key => ({ pointer: toJsonPointer([key]), message: `unknown argument "${key}"`, code: 'unrecognized_keys' })))
}

function invalid (pointer: string, message: string, code: string): GatewayError {
  return invalidInput({ pointer, message, code })
}
