import type { NamedTool } from '../core/bundles/named-tool.js'
import { firstSentenceOf } from './tool-listing.js'

/**
 * The OpenAPI document as one caller may see it: the full document with the operations of
 * tools the caller may not call (inactive for it, or denied by the rules) taken out, so that
 * an inactive tool looks exactly like an unknown one. Views are cached per distinct set of
 * visible tools, as JSON ready to send: most callers share a handful of views.
 */
export class DocumentViews {
  readonly #full: () => Record<string, unknown>
  readonly #toolOfPath: (path: string) => string | undefined
  readonly #cache = new Map<string, string>()
  /** Per bundle object (a reload makes new ones): its views, keyed as `#cache` is. */
  readonly #bundles = new WeakMap<object, Map<string, string>>()
  readonly #maxViews: number

  /**
   * @param full the whole document (generated once, read lazily)
   * @param toolOfPath which tool a path belongs to, if any (`/tools/{id}` of a known tool)
   */
  constructor (full: () => Record<string, unknown>, toolOfPath: (path: string) => string | undefined, maxViews = 256) {
    this.#full = full
    this.#toolOfPath = toolOfPath
    this.#maxViews = maxViews
  }

  /** The document as JSON, with only the tools in `visible` (a caller's, in catalogue order). */
  json (visible: readonly string[]): string {
    const key = visible.join(',')
    const cached = this.#cache.get(key)
    if (cached !== undefined) return cached
    const text = JSON.stringify(this.#view(new Set(visible)))
    if (this.#cache.size >= this.#maxViews) this.#cache.delete(this.#cache.keys().next().value!)
    this.#cache.set(key, text)
    return text
  }

  /**
   * A bundle's own document: the operations of the tools in `visible` (a caller's, in bundle
   * order) at the bundle's paths (`pathOf` a name), under the bundle's names and descriptions,
   * titled and described as the bundle.
   */
  bundleJson (bundle: { readonly name: string, readonly description: string }, visible: readonly NamedTool[], pathOf: (name: string) => string): string {
    let cache = this.#bundles.get(bundle)
    if (cache === undefined) {
      cache = new Map()
      this.#bundles.set(bundle, cache)
    }
    const key = visible.map(named => named.name).join(',')
    const cached = cache.get(key)
    if (cached !== undefined) return cached
    const full = this.#full()
    const byTool = new Map<string, unknown>()
    for (const [path, item] of Object.entries(this.#paths())) {
      const id = this.#toolOfPath(path)
      if (id !== undefined) byTool.set(id, item)
    }
    const paths: Record<string, unknown> = {}
    for (const named of visible) {
      const item = byTool.get(named.tool.id)
      if (item !== undefined) paths[pathOf(named.name)] = renamed(item as Record<string, Record<string, unknown>>, named)
    }
    const info = { ...(full.info as Record<string, unknown>), title: `${bundle.name} (a toolgate bundle)`, description: bundle.description }
    const text = JSON.stringify(withoutUnreferencedSchemas({ ...full, info, paths }))
    if (cache.size >= this.#maxViews) cache.delete(cache.keys().next().value!)
    cache.set(key, text)
    return text
  }

  /** The whole catalogue, for operators who publish the document on purpose. */
  fullJson (): string {
    return this.json([...this.#allTools()])
  }

  #allTools (): Set<string> {
    const ids = new Set<string>()
    for (const path of Object.keys(this.#paths())) {
      const id = this.#toolOfPath(path)
      if (id !== undefined) ids.add(id)
    }
    return ids
  }

  #paths (): Record<string, unknown> {
    return (this.#full().paths ?? {}) as Record<string, unknown>
  }

  #view (visible: ReadonlySet<string>): Record<string, unknown> {
    const full = this.#full()
    const paths: Record<string, unknown> = {}
    for (const [path, item] of Object.entries(this.#paths())) {
      const id = this.#toolOfPath(path)
      if (id === undefined || visible.has(id)) paths[path] = item
    }
    return withoutUnreferencedSchemas({ ...full, paths })
  }
}

/** A tool's path item under a bundle's name: its operation's id, summary and description say the bundle's. */
function renamed (item: Record<string, Record<string, unknown>>, named: NamedTool): Record<string, unknown> {
  const { tool } = named
  if (named.name === tool.id && named.description === tool.description) return item
  const operation = item.post!
  const description = String(operation.description)
  return {
    ...item,
    post: {
      ...operation,
      operationId: named.name,
      summary: firstSentenceOf(named.description),
      // The generated description opens with the tool's own; the effects and flags after it stay.
      description: description.startsWith(tool.description) ? named.description + description.slice(tool.description.length) : named.description,
      'x-tool': tool.id,
    },
  }
}

/** Component schemas only the hidden tools used would tell of them: keep only referenced ones. */
function withoutUnreferencedSchemas (document: Record<string, unknown>): Record<string, unknown> {
  const components = document.components as { schemas?: Record<string, unknown> } | undefined
  if (components?.schemas === undefined) return document
  const { schemas, ...otherComponents } = components
  const withoutSchemas = JSON.stringify({ ...document, components: otherComponents })
  const kept: Record<string, unknown> = {}
  // A schema may reference another: repeat until no new reference turns up.
  let text = withoutSchemas
  let grew = true
  while (grew) {
    grew = false
    for (const [name, schema] of Object.entries(schemas)) {
      if (!(name in kept) && text.includes(`"#/components/schemas/${name}"`)) {
        kept[name] = schema
        text += JSON.stringify(schema)
        grew = true
      }
    }
  }
  return { ...document, components: { ...otherComponents, schemas: kept } }
}
