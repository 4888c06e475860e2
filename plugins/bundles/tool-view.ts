import type { FastifyInstance, FastifyRequest } from 'fastify'
import type { NamedTool } from '../../src/core/bundles/named-tool.js'
import type { GatewayApp } from '../../src/core/app-context.js'
import { GatewayError, type ToolSet } from '../../src/index.js'
import type { Bundle } from '../../src/services/bundles/bundle.js'
import type { LiveBundles } from '../../src/services/bundles/live-bundles.js'
import { visibleOf, type ToolView } from '../../src/services/bundles/tool-view.js'

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
export function visibleIn (view: ToolView<GatewayApp>, scope: FastifyInstance, request: FastifyRequest, set: ToolSet<GatewayApp>, app: GatewayApp): NamedTool<GatewayApp>[] {
  const { id } = request.principal
  return visibleOf(view, set, app, tool => scope.isPermitted(id, tool.id))
}
