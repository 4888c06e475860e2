import { ToolDefinitionError } from './errors.js'
import { isActive } from './steps/gates.js'
import type { AnyTool } from './tool.js'

/**
 * One version of the catalog's tools: frozen, in declaration order, looked up by id. A catalog
 * swaps whole sets (`ToolCatalog.replace`); a face that reads one set per request sees either
 * the old tools or the new ones, never a mix, and a call holds the set it started in.
 */
export class ToolSet<App = unknown> {
  readonly tools: readonly AnyTool<App>[]
  /** Counts up from 1 with every set a catalog installs; 0 for a set no catalog installed yet. */
  readonly version: number
  readonly byId: ReadonlyMap<string, AnyTool<App>>

  /** Throws `ToolDefinitionError` naming both files when two tools share an id. */
  constructor (tools: readonly AnyTool<App>[], version = 0) {
    const byId = new Map<string, AnyTool<App>>()
    for (const tool of tools) {
      const first = byId.get(tool.id)
      if (first !== undefined) {
        throw new ToolDefinitionError(tool.id, 'id', `is declared twice${first.source === undefined ? '' : ` (first in ${first.source})`}`, tool.source)
      }
      byId.set(tool.id, tool)
    }
    this.tools = Object.freeze([...tools])
    this.byId = byId
    this.version = version
  }

  ids (): string[] {
    return this.tools.map(tool => tool.id)
  }

  get (id: string): AnyTool<App> | undefined {
    return this.byId.get(id)
  }

  /** The tools offered to `app`, in declaration order (inactive ones are invisible). */
  active (app: App): AnyTool<App>[] {
    return this.tools.filter(tool => tool.active === undefined || isActive(tool, app))
  }
}

/** What a replacement changed, by id, each list in the new (or, for `removed`, the old) order. */
export interface ToolSetChange {
  readonly added: readonly string[]
  /** Ids whose declaration is another object now (a module that was imported again). */
  readonly changed: readonly string[]
  readonly removed: readonly string[]
}

export function changeBetween<App> (before: ToolSet<App>, after: ToolSet<App>): ToolSetChange {
  const added: string[] = []
  const changed: string[] = []
  for (const tool of after.tools) {
    const old = before.get(tool.id)
    if (old === undefined) added.push(tool.id)
    else if (old !== tool) changed.push(tool.id)
  }
  const removed = before.tools.filter(tool => !after.byId.has(tool.id)).map(tool => tool.id)
  return { added, changed, removed }
}

export function isEmptyChange (change: ToolSetChange): boolean {
  return change.added.length === 0 && change.changed.length === 0 && change.removed.length === 0
}
