/*
 * What a tool may answer beside its output, for the faces that carry it: MCP content blocks
 * (text, an image, audio, a link to a resource, an embedded resource) and MCP structured
 * content. An MCP client gets them as the tool gave them, a model an image as an image;
 * REST answers the output alone, as its operation documents.
 */

/** One MCP content block: its `type`, and whatever its type carries. */
export interface ContentBlock {
  readonly type: string
  readonly [member: string]: unknown
}

const CONTENT = Symbol.for('toolgate.content')

/** A tool's output with the content blocks (and structured content) MCP clients get for it. */
export interface WithContent<T = unknown> {
  readonly [CONTENT]: true
  readonly output: T
  readonly content: readonly ContentBlock[]
  /** The structured content MCP clients get (default: the output, when the tool declares an output schema). */
  readonly structuredContent?: unknown
}

/**
 * Answer `output` (what REST and the output schema see) with MCP content blocks beside it:
 * an MCP client gets the blocks as they are, a model reads an image as an image.
 *
 * @example
 * import { z } from 'zod'
 * import { defineTool, withContent } from 'toolgate'
 * export default defineTool({
 *   id: 'chart', kind: 'read', description: 'Draw the chart of a series as a PNG.',
 *   inputSchema: z.object({ series: z.array(z.number()) }), outputSchema: z.object({ points: z.number() }),
 *   isReadOnly: true, isConcurrencySafe: true, authorize () {},
 *   execute: ({ series }) => withContent({ points: series.length }, [{ type: 'image', data: 'iVBORw0KGgo=', mimeType: 'image/png' }]),
 * })
 */
export function withContent<T> (output: T, content: readonly ContentBlock[], options: { readonly structuredContent?: unknown } = {}): WithContent<T> {
  return { [CONTENT]: true, output, content, ...('structuredContent' in options ? { structuredContent: options.structuredContent } : {}) }
}

export function isWithContent (value: unknown): value is WithContent {
  return typeof value === 'object' && value !== null && (value as { [CONTENT]?: unknown })[CONTENT] === true
}

const BASE64 = /^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$/

/**
 * The blocks as MCP (2025-06-18 and later) defines them, or the first problem found: each has
 * what its type must have (anything more passes as it is), and a block of a type MCP adds
 * later passes too, as long as it says its type. Checked by hand: it runs on every answer.
 */
export function checkContent (content: unknown): { readonly ok: true, readonly content: readonly ContentBlock[] } | { readonly ok: false, readonly problem: string } {
  if (!Array.isArray(content)) return { ok: false, problem: 'content: not a list of blocks' }
  for (let index = 0; index < content.length; index++) {
    const problem = blockProblem(content[index])
    if (problem !== undefined) return { ok: false, problem: `content block ${index}: ${problem}` }
  }
  return { ok: true, content: content as ContentBlock[] }
}

function blockProblem (block: unknown): string | undefined {
  if (!isRecord(block)) return 'not an object'
  const { type } = block
  if (typeof type !== 'string' || type === '') return 'it has no type'
  if (block.annotations !== undefined && !isRecord(block.annotations)) return `${type}: annotations must be an object`
  if (block._meta !== undefined && !isRecord(block._meta)) return `${type}: _meta must be an object`
  switch (type) {
    case 'text': return typeof block.text === 'string' ? undefined : 'text: text must be a string'
    case 'image':
    case 'audio':
      if (typeof block.data !== 'string' || !BASE64.test(block.data)) return `${type}: data must be base64`
      return typeof block.mimeType === 'string' && block.mimeType !== '' ? undefined : `${type}: mimeType must be a string`
    case 'resource_link':
      return typeof block.uri === 'string' && block.uri !== '' && typeof block.name === 'string' ? undefined : 'resource_link: uri and name must be strings'
    case 'resource': return resourceProblem(block.resource)
    default: return undefined
  }
}

function resourceProblem (resource: unknown): string | undefined {
  if (!isRecord(resource) || typeof resource.uri !== 'string' || resource.uri === '') return 'resource: resource.uri must be a string'
  if (typeof resource.text === 'string') return undefined
  return typeof resource.blob === 'string' && BASE64.test(resource.blob) ? undefined : 'resource: resource.text must be a string, or resource.blob base64'
}

function isRecord (value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value)
}
