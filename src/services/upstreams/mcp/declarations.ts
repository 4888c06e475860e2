import type { CallToolResult, Tool as McpToolInfo } from '@modelcontextprotocol/client'
import { z } from 'zod'
import type { GatewayApp } from '../../../core/app-context.js'
import { withContent } from '../../../core/content.js'
import { UpstreamError } from '../../../core/errors.js'
import type { Effect, ToolDeclaration, ToolOrigin } from '../../../core/tool.js'
import type { OperatorDeclaration } from '../file.js'
import { jsonSchema, operatorFields } from '../operator.js'
import type { UpstreamConnection } from './connection.js'
import { boundedAnswer } from '../answer-bounds.js'

/*
 * An upstream MCP tool as one more declaration: the same pipeline runs it (input validation,
 * authorize, approvals, idempotency, the scheduler, the hard timeout, parseOutput, metrics,
 * audit). What it declares comes from the operator first, then the server's annotations (the
 * MCP spec calls them untrusted hints), then the spec's own defaults, and the listing says
 * which for every field.
 */

type Declaration = ToolDeclaration<z.ZodType, z.ZodType, GatewayApp>
type Source = ToolOrigin['declaredBy'][string]

/** What an upstream tool answers when it declares no output schema: its MCP content, as sent. */
const McpResultSchema = z.object({
  content: z.array(z.looseObject({ type: z.string() })).describe('The MCP content blocks of the result (text, image, audio, resource_link, resource)'),
  structuredContent: z.record(z.string(), z.unknown()).optional().describe('Structured content, when the upstream sent any'),
}).describe('The result of an upstream MCP tool that declares no output schema')

/** The longest `isError` text a caller sees: the rest stays upstream. */
const ERROR_TEXT_CHARS = 2_000

export interface UpstreamTool {
  readonly id: string
  readonly upstream: McpToolInfo
  readonly operator: OperatorDeclaration
  readonly connection: UpstreamConnection
}

/** The declaration of one upstream tool. Throws a `ConfigError` when an operator rule does not compile. */
export function declarationOf ({ id, upstream, operator, connection }: UpstreamTool): Declaration {
  const hints = upstream.annotations ?? {}
  const declaredBy: Record<string, Source> = {}
  const pick = <T>(field: string, mine: T | undefined, theirs: T | undefined, fallback: T): T => {
    declaredBy[field] = mine !== undefined ? 'operator' : theirs !== undefined ? 'upstream' : 'default'
    return mine ?? theirs ?? fallback
  }
  const isReadOnly = pick('isReadOnly', operator.isReadOnly, hints.readOnlyHint, false)
  // MCP has no concurrency hint: a tool that changes nothing may run beside others.
  const isConcurrencySafe = pick('isConcurrencySafe', operator.isConcurrencySafe, hints.readOnlyHint, false)
  const hinted = hints.destructiveHint !== undefined || hints.openWorldHint !== undefined
  const effects = pick('effects', operator.effects, hinted ? hintedEffects(hints, isReadOnly) : undefined, hintedEffects(hints, isReadOnly))
  const description = pick('description', operator.description, nonEmpty(upstream.description) ?? nonEmpty(upstream.title), `The tool "${upstream.name}" of the MCP server "${connection.config.name}".`)
  const output = upstream.outputSchema === undefined ? undefined : jsonSchema(upstream.outputSchema)
  const auth = connection.config.transport === 'stdio' ? connection.config.perPerson?.auth : connection.config.auth
  const origin: ToolOrigin = { type: 'mcp', server: connection.config.name, name: upstream.name, ...(auth === undefined ? {} : { credential: auth.type }), declaredBy }
  const declaration: Declaration = {
    id,
    kind: operator.kind ?? 'mcp',
    description,
    inputSchema: jsonSchema(upstream.inputSchema),
    outputSchema: output ?? McpResultSchema,
    effects,
    isReadOnly,
    isConcurrencySafe,
    ...operatorFields(id, operator),
    // A dry run answers the request that would be sent; nothing is sent.
    resolve: (input: unknown) => ({ upstream: connection.config.name, method: 'tools/call', params: { name: upstream.name, arguments: input } }),
    execute: async (input: unknown, ctx) => {
      // `ctx.signal` is made only if read: a call that gets a slot at once listens through onAbort.
      const result = await connection.call(upstream.name, input, { get signal () { return ctx.signal }, onAbort: ctx.onAbort, readOnly: isReadOnly, trace: ctx.trace, onProgress: ctx.progress, onElicit: ctx.elicit, principal: ctx.app.principal, timeoutMs: operator.timeoutMs })
      return resultOf(connection.config.name, result, output !== undefined) as never
    },
    origin,
  }
  return declaration
}

/** The spec's defaults for a tool that is not read-only: destructive and open-world unless it says otherwise. */
function hintedEffects (hints: NonNullable<McpToolInfo['annotations']>, readOnly: boolean): Effect[] {
  const effects: Effect[] = []
  if (!readOnly && (hints.destructiveHint ?? true)) effects.push('irreversible')
  if (hints.openWorldHint ?? true) effects.push('external')
  return effects
}

/** `isError` is the tool failing: never a 200. Its text reaches the caller, bounded. */
function resultOf (server: string, result: CallToolResult, structured: boolean): unknown {
  if (result.isError === true) {
    const text = result.content.flatMap(block => (block.type === 'text' ? [block.text] : [])).join('\n').slice(0, ERROR_TEXT_CHARS)
    throw new UpstreamError('TOOLGATE_UPSTREAM_TOOL_ERROR', text === '' ? `the tool on upstream "${server}" reported an error` : text, { upstream: server })
  }
  const who = `upstream "${server}"`
  // REST answers the output its operation documents; over MCP the blocks (and structured
  // content) go on as the server sent them.
  const sent = result.structuredContent === undefined ? {} : { structuredContent: boundedAnswer(result.structuredContent, who) }
  const content = boundedAnswer(result.content, who)
  if (structured) return withContent(sent.structuredContent, content, sent)
  return withContent({ content, ...sent }, content, sent)
}

function nonEmpty (text: string | undefined): string | undefined {
  return text === undefined || text.trim() === '' ? undefined : text
}
