import type { ToolCatalog } from '../../core/catalog.js'
import type { AnyTool, ToolDeclaration } from '../../core/tool.js'
import { isEmptyChange, type ToolSet, type ToolSetChange } from '../../core/tool-set.js'

// eslint-disable-next-line @typescript-eslint/no-explicit-any -- declarations of any schema shape
type Declarations<App> = ReadonlyArray<AnyTool<App> | ToolDeclaration<any, any, App>>

/** What a replacement did: the new version, the ids it added, changed and removed. */
export interface ToolReplacement {
  readonly version: number
  readonly added: readonly string[]
  readonly changed: readonly string[]
  readonly removed: readonly string[]
  /** Tools serving now. */
  readonly tools: number
  readonly durationMs: number
}

/**
 * A replacement that was refused: the catalog that was serving still serves. `cause` is what
 * was wrong (a `ToolLoadError` naming the file, a `ToolDefinitionError` naming the tool, its
 * file and the field, ...).
 */
export class ToolReplacementError extends Error {
  constructor (readonly serving: { readonly version: number, readonly tools: number }, cause: unknown) {
    super(`the tools were not replaced (still serving version ${serving.version}, ${serving.tools} tools): ${cause instanceof Error ? cause.message : String(cause)}`, { cause })
    this.name = 'ToolReplacementError'
  }
}

interface Log {
  info (object: object, message: string): void
  error (object: object, message: string): void
}

export interface CatalogUpdatesOptions<App> {
  readonly catalog: ToolCatalog<App>
  /** What a set needs before it serves (its OpenAPI document), off the request path. */
  readonly prepare?: (set: ToolSet<App>) => Promise<void>
  readonly log: Log
  /** Told of every replacement tried, for the metrics. */
  readonly onOutcome?: (outcome: 'ok' | 'failed', tools: number) => void
}

/**
 * Replacements of a gateway's tools, one at a time: load (or take) the new tools,
 * prepare the set while the old one serves, then swap in one step. Anything that goes wrong
 * before the swap refuses the replacement whole, and the serving catalog is untouched.
 */
export class CatalogUpdates<App> {
  readonly #options: CatalogUpdatesOptions<App>
  #queue: Promise<unknown> = Promise.resolve()

  constructor (options: CatalogUpdatesOptions<App>) {
    this.#options = options
  }

  /**
   * Replace every tool with what `load` gives (an array, or a function that loads one, such
   * as a tools folder). Resolves with what changed; rejects with a `ToolReplacementError`.
   * Replacements queue: each starts once the one before it has finished. `installed` runs
   * when the tools serve (or were already serving), before the next replacement starts.
   */
  replace (load: Declarations<App> | (() => Promise<Declarations<App>>), origin: string, installed?: () => void): Promise<ToolReplacement> {
    // The caller's array as it is now: changing it while the replacement waits changes nothing.
    const given = typeof load === 'function' ? load : [...load]
    const next = this.#queue.then(async () => {
      const replacement = await this.#replace(given, origin)
      installed?.()
      return replacement
    })
    this.#queue = next.catch(() => undefined)
    return next
  }

  async #replace (load: Declarations<App> | (() => Promise<Declarations<App>>), origin: string): Promise<ToolReplacement> {
    const { catalog, log } = this.#options
    const started = performance.now()
    let set: ToolSet<App>
    try {
      if (catalog.closing) throw new Error('the gateway is shutting down')
      const tools = typeof load === 'function' ? await load() : load
      set = catalog.prepare(tools)
      // Nothing changed (a reload of an untouched folder): the set serving stays, at no cost.
      if (sameTools(catalog.current, set)) return this.#unchanged(started, origin)
      await this.#options.prepare?.(set)
    } catch (error) {
      const serving = { version: catalog.current.version, tools: catalog.current.tools.length }
      const refused = new ToolReplacementError(serving, error)
      this.#options.onOutcome?.('failed', serving.tools)
      log.error({ err: error, origin, ...where(error), serving: serving.version }, refused.message)
      throw refused
    }
    const change = catalog.install(set)
    return this.#done(change, set, started, origin)
  }

  #unchanged (started: number, origin: string): ToolReplacement {
    const { current } = this.#options.catalog
    const replacement = { version: current.version, added: [], changed: [], removed: [], tools: current.tools.length, durationMs: Math.round((performance.now() - started) * 10) / 10 }
    this.#options.onOutcome?.('ok', current.tools.length)
    this.#options.log.info({ origin, ...replacement }, 'tools reloaded: nothing changed')
    return replacement
  }

  #done (change: ToolSetChange, set: ToolSet<App>, started: number, origin: string): ToolReplacement {
    const { log } = this.#options
    const replacement = { version: set.version, added: change.added, changed: change.changed, removed: change.removed, tools: set.tools.length, durationMs: Math.round((performance.now() - started) * 10) / 10 }
    this.#options.onOutcome?.('ok', set.tools.length)
    log.info({ origin, ...replacement }, isEmptyChange(change) ? 'tools reordered' : 'tools replaced')
    return replacement
  }
}

/** The very same declarations in the same order. */
function sameTools<App> (a: ToolSet<App>, b: ToolSet<App>): boolean {
  return a.tools.length === b.tools.length && a.tools.every((tool, i) => b.tools[i] === tool)
}

/**
 * The file, tool and field a load or definition error names, for the log line. A module that
 * calls `defineTool` itself fails while it is imported: the load error names the file, and its
 * cause (the definition error) the tool and the field. The outermost error that names one wins.
 */
function where (error: unknown): Record<string, string> {
  const out: Record<string, string> = {}
  for (let link = error, depth = 0; link !== null && typeof link === 'object' && depth < 8; link = (link as { cause?: unknown }).cause, depth++) {
    const fields = link as { file?: unknown, source?: unknown, toolId?: unknown, field?: unknown }
    const file = typeof fields.source === 'string' ? fields.source : fields.file
    if (out.file === undefined && typeof file === 'string') out.file = file
    if (out.tool === undefined && typeof fields.toolId === 'string') out.tool = fields.toolId
    if (out.field === undefined && typeof fields.field === 'string') out.field = fields.field
  }
  return out
}
