import type { AnyTool } from '../tool.js'

/**
 * A tool as one face names it: by its own id and description, or by the alias a bundle gives
 * it. The declaration stays one (`tool`): a call by either name is the same call.
 */
// As `AnyTool`: a face holds tools of many apps' shapes.
// eslint-disable-next-line @typescript-eslint/no-explicit-any
export interface NamedTool<App = any> {
  /** What callers of this face call it: the tool's id, or its alias in a bundle. */
  readonly name: string
  readonly description: string
  readonly tool: AnyTool<App>
}

const own = new WeakMap<AnyTool, NamedTool>()

/** A tool under its own id and description, one object per declaration (faces cache by it). */
export function ownNameOf<App> (tool: AnyTool<App>): NamedTool<App> {
  let named = own.get(tool)
  if (named === undefined) {
    named = Object.freeze({ name: tool.id, description: tool.description, tool })
    own.set(tool, named)
  }
  return named as NamedTool<App>
}

const ownNames = new WeakMap<readonly AnyTool[], readonly NamedTool[]>()

/**
 * Every tool of a list under its own id, one array per list: a catalog's tools are one frozen
 * array per version, so a face gets the same named array until the catalog changes.
 */
export function ownNamesOf<App> (tools: readonly AnyTool<App>[]): readonly NamedTool<App>[] {
  let named = ownNames.get(tools)
  if (named === undefined) {
    named = Object.freeze(tools.map(ownNameOf))
    ownNames.set(tools, named)
  }
  return named as readonly NamedTool<App>[]
}

/** Whether a face shows the tool under another name or description than its own. */
export function isAliased (named: NamedTool): boolean {
  return named.name !== named.tool.id || named.description !== named.tool.description
}
