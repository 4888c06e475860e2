import { createHash } from 'node:crypto'
import { TOOL_ID } from '../../core/define-tool.js'

/**
 * A name as an id part: camelCase split with `_`, lower case, every character outside
 * `[a-z0-9]` to `_`, runs of `_` as one, none at either end. `getSum`, `get-sum` and
 * `get sum` all read `get_sum`: the same upstream name always maps to the same id.
 */
export function idPartOf (name: string): string {
  return name
    .replace(/([a-z0-9])([A-Z])/g, '$1_$2')
    .replace(/([A-Z]+)([A-Z][a-z])/g, '$1_$2')
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, '_')
    .replace(/^_+|_+$/g, '')
}

/** The longest tool id: what OpenAI, Anthropic and Gemini take as a function name. */
const MAX_ID = 64
const DIGEST_CHARS = 8

/**
 * `{server}_{tool}`, or the file's rename of `server/tool`; undefined when that is no valid id.
 * Longer than an id may be, it keeps what fits and ends with a digest of the whole name
 * (`_` and 8 hex digits): the same names always give the same id, and two long names that
 * share their start do not share an id. `rename` chooses another.
 */
export function upstreamToolId (server: string, tool: string, rename: Readonly<Record<string, string>>): string | undefined {
  const renamed = rename[`${server}/${tool}`]
  if (renamed !== undefined) return renamed
  const id = `${idPartOf(server)}_${idPartOf(tool)}`
  if (TOOL_ID.test(id)) return id
  if (id.length <= MAX_ID) return undefined
  const digest = createHash('sha256').update(`${server}/${tool}`).digest('hex').slice(0, DIGEST_CHARS)
  const short = `${id.slice(0, MAX_ID - DIGEST_CHARS - 1).replace(/_+$/, '')}_${digest}`
  return TOOL_ID.test(short) ? short : undefined
}
