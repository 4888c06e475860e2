import type { FastifyInstance, FastifyRequest } from 'fastify'
import { ownNameOf, type NamedTool } from '../../src/core/bundles/named-tool.js'
import type { GatewayApp } from '../../src/core/app-context.js'
import { GatewayError, type ToolSet } from '../../src/index.js'
import type { Bundle } from '../../src/services/bundles/bundle.js'
import type { LiveBundles } from '../../src/services/bundles/live-bundles.js'

/**
 * The tools one address serves, as it names them: the whole catalog under the tools' own ids,
 * or one bundle's tools under its names. Every face (REST, MCP, the documents, the exports)
 * reads its tools through a view, so a bundle's address is the same face over fewer tools.
 */
export interface ToolView {
  /** The bundle this address serves (absent: the whole catalog). */
  readonly bundle?: Bundle
  /** Every tool the address serves in `set`, one array per catalog version. */
  all (set: ToolSet<GatewayApp>): readonly NamedTool<GatewayApp>[]
  /** The tool served under `name` in `set`, active for the caller or not (the pipeline checks). */
  get (set: ToolSet<GatewayApp>, name: string): NamedTool<GatewayApp> | undefined
}

const ownNames = new WeakMap<ToolSet<GatewayApp>, readonly NamedTool<GatewayApp>[]>()

/** The whole catalog, under the tools' own ids. */
export const CATALOG_VIEW: ToolView = {
  all (set) {
    let named = ownNames.get(set)
    if (named === undefined) {
      named = set.tools.map(ownNameOf)
      ownNames.set(set, named)
    }
    return named
  },
  get (set, name) {
    const tool = set.get(name)
    return tool === undefined ? undefined : ownNameOf(tool)
  },
}

/** One bundle's tools under the bundle's names. */
export function bundleView (bundle: Bundle): ToolView {
  return {
    bundle,
    all: set => bundle.membersOf(set.tools).all,
    get: (set, name) => bundle.membersOf(set.tools).byName.get(name),
  }
}

/**
 * The bundle `name` for this request's caller: one it may not use answers exactly as one that
 * does not exist, so a bundle's name tells nothing to those outside it.
 */
export function bundleFor (request: FastifyRequest, bundles: LiveBundles | undefined, name: string): Bundle {
  const bundle = bundles?.current.get(name)
  if (bundle === undefined || !bundle.mayUse(request.principal)) throw new GatewayError('TOOLGATE_BUNDLE_NOT_FOUND', `no bundle "${name}"`)
  return bundle
}

/** The view's tools this request's caller may call: active for its app, and permitted by the rules. */
export function visibleIn (view: ToolView, scope: FastifyInstance, request: FastifyRequest, set: ToolSet<GatewayApp>, app: GatewayApp): NamedTool<GatewayApp>[] {
  const { id } = request.principal
  const active = new Set(set.active(app))
  return view.all(set).filter(named => active.has(named.tool) && scope.isPermitted(id, named.tool.id))
}
