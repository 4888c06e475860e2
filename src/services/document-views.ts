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
