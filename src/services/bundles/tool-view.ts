import { ownNameOf, ownNamesOf, type NamedTool } from '../../core/bundles/named-tool.js'
import type { ToolSet } from '../../core/tool-set.js'
import type { AnyTool } from '../../core/tool.js'
import type { Bundle } from './bundle.js'

/**
 * The tools one address serves, as it names them: the whole catalog under the tools' own ids,
 * or one bundle's tools under its names. Every face (REST, MCP over HTTP and stdio, the
 * documents, the exports) reads its tools through a view, so a bundle's address is the same
 * face over fewer tools.
 */
export interface ToolView<App> {
  /** The bundle this address serves (absent: the whole catalog). */
  readonly bundle?: Bundle
  /** Every tool the address serves in `set`, one array per catalog version. */
  all (set: ToolSet<App>): readonly NamedTool<App>[]
  /** The tool served under `name` in `set`, active for the caller or not (the pipeline checks). */
  get (set: ToolSet<App>, name: string): NamedTool<App> | undefined
}

/** The whole catalog, under the tools' own ids. */
export function catalogView<App> (): ToolView<App> {
  return CATALOG_VIEW as ToolView<App>
}

const CATALOG_VIEW: ToolView<unknown> = {
  all: set => ownNamesOf(set.tools),
  get (set, name) {
    const tool = set.get(name)
    return tool === undefined ? undefined : ownNameOf(tool)
  },
}

/** One bundle's tools under the bundle's names. */
export function bundleView<App> (bundle: Bundle): ToolView<App> {
  return {
    bundle,
    all: set => bundle.membersOf(set.tools).all,
    get: (set, name) => bundle.membersOf(set.tools).byName.get(name),
  }
}

/** The view's tools a caller may call: active for its app, and permitted by the rules. */
export function visibleOf<App> (view: ToolView<App>, set: ToolSet<App>, app: App, permitted: (tool: AnyTool<App>) => boolean): NamedTool<App>[] {
  const active = new Set(set.active(app))
  return view.all(set).filter(named => active.has(named.tool) && permitted(named.tool))
}
