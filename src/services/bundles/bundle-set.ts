import type { AnyTool } from '../../core/tool.js'
import { ConfigError } from '../config.js'
import { Bundle } from './bundle.js'
import type { BundleDeclaration } from './declaration.js'

/** What a check could not settle: patterns that match nothing while an upstream is down. */
export interface BundleWarning {
  readonly bundle: string
  readonly problem: string
}

/** The operator's bundles of one reading of the upstreams file, by name, in file order. */
export class BundleSet {
  readonly #bundles: ReadonlyMap<string, Bundle>

  /** `where`: how errors name the file (`upstreams file F`). */
  constructor (declarations: Readonly<Record<string, BundleDeclaration>>, readonly where: string) {
    this.#bundles = new Map(Object.entries(declarations).map(([name, declaration]) => [name, new Bundle(name, declaration, `${where}: bundles.${name}`)]))
  }

  get size (): number {
    return this.#bundles.size
  }

  get (name: string): Bundle | undefined {
    return this.#bundles.get(name)
  }

  list (): readonly Bundle[] {
    return [...this.#bundles.values()]
  }

  /**
   * Refuse, naming the bundle and field, what cannot be served over `tools`: an alias of a tool
   * the bundle does not hold, two tools under one name, and, when the catalog is `complete`
   * (every upstream up), a pattern that matches no tool. While a server is down its tools may
   * be the ones a pattern means: those are returned as warnings, not refused.
   */
  check (tools: readonly AnyTool[], complete: boolean): BundleWarning[] {
    const warnings: BundleWarning[] = []
    for (const bundle of this.#bundles.values()) {
      for (const { field, message, unmatched } of bundle.problemsWith(tools)) {
        const text = `${this.where}: bundles.${bundle.name}.${field}: ${message}`
        if (unmatched && !complete) warnings.push({ bundle: bundle.name, problem: text })
        else throw new ConfigError(text)
      }
    }
    return warnings
  }
}
