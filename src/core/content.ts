import { z } from 'zod'

/*
 * What a tool may answer beside its output, for the faces that carry it: MCP content blocks
 * (text, an image, audio, a link to a resource, an embedded resource) and MCP structured
 * content. An MCP client gets them as the tool gave them, a model an image as an image;
 * REST answers the output alone, as its operation documents.
 */

const annotated = { annotations: z.record(z.string(), z.unknown()).optional(), _meta: z.record(z.string(), z.unknown()).optional() }

/**
 * The content blocks of MCP (2025-06-18 and later), each with what it must have; anything more
 * passes as it is. A block of a type MCP adds later passes too, as long as it says its type.
 */
const KNOWN_BLOCKS = {
  text: z.looseObject({ type: z.literal('text'), text: z.string(), ...annotated }),
  image: z.looseObject({ type: z.literal('image'), data: z.base64(), mimeType: z.string().min(1), ...annotated }),
  audio: z.looseObject({ type: z.literal('audio'), data: z.base64(), mimeType: z.string().min(1), ...annotated }),
  resource_link: z.looseObject({ type: z.literal('resource_link'), uri: z.string().min(1), name: z.string(), ...annotated }),
  resource: z.looseObject({
    type: z.literal('resource'),
    resource: z.union([z.looseObject({ uri: z.string().min(1), text: z.string() }), z.looseObject({ uri: z.string().min(1), blob: z.base64() })]),
    ...annotated,
  }),
} as const
const AnyBlock = z.looseObject({ type: z.string().min(1) })

/** One MCP content block: `type` and whatever its type carries. */
export type ContentBlock = z.output<typeof AnyBlock>

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

/** The blocks as MCP defines them, or the first problem found. */
export function checkContent (content: unknown): { readonly ok: true, readonly content: readonly ContentBlock[] } | { readonly ok: false, readonly problem: string } {
  if (!Array.isArray(content)) return { ok: false, problem: 'content: not a list of blocks' }
  for (const [index, block] of content.entries()) {
    const any = AnyBlock.safeParse(block)
    if (!any.success) return { ok: false, problem: `content block ${index}: it has no type` }
    const known = Object.hasOwn(KNOWN_BLOCKS, any.data.type) ? KNOWN_BLOCKS[any.data.type as keyof typeof KNOWN_BLOCKS] : undefined
    const parsed = known?.safeParse(block)
    if (parsed !== undefined && !parsed.success) {
      const issue = parsed.error.issues[0]
      return { ok: false, problem: `content block ${index} (${any.data.type}): ${[...(issue?.path ?? [])].join('.') || 'block'}: ${issue?.message ?? 'malformed'}` }
    }
  }
  return { ok: true, content: content as ContentBlock[] }
}
