import type { NamedTool } from '../../src/core/bundles/named-tool.js'
import { queryOf } from '../../src/services/search/query.js'
import { toolSearchOf } from '../../src/services/search/tool-search.js'

/**
 * A listing's tools as `GET /tools?q=` answers them: without `q`, every visible tool in catalog
 * order; with it, the visible tools its words best describe, best first (the search discovery
 * mode runs over MCP, over the same tools). A bad query is a 400 naming `/query/q`.
 */
export function searched<App> (all: readonly NamedTool<App>[], visible: readonly NamedTool<App>[], q: string | undefined, limit: number, defaultTimeoutMs: number): readonly NamedTool<App>[] {
  if (q === undefined) return visible
  const query = queryOf(q, '/query/q')
  const shown = new Set(visible)
  return toolSearchOf(all, defaultTimeoutMs).search(query, { limit, visible: named => shown.has(named as NamedTool<App>) }).map(hit => hit.named as NamedTool<App>)
}
