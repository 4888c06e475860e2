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

/** `{server}_{tool}`, or the file's rename of `server/tool`; undefined when that is no valid id. */
export function upstreamToolId (server: string, tool: string, rename: Readonly<Record<string, string>>): string | undefined {
  const renamed = rename[`${server}/${tool}`]
  if (renamed !== undefined) return renamed
  const id = `${idPartOf(server)}_${idPartOf(tool)}`
  return TOOL_ID.test(id) ? id : undefined
}
