import { ownNameOf, type NamedTool } from '../../core/bundles/named-tool.js'
import type { Principal } from '../../core/app-context.js'
import type { AnyTool } from '../../core/tool.js'
import { compileGlob } from '../auth/glob.js'
import { compileRule, type Rule } from '../upstreams/rules.js'
import type { BundleDeclaration } from './declaration.js'

/** One thing wrong with a bundle over a catalog: its field, and whether it is a pattern that matched nothing. */
export interface BundleProblem {
  readonly field: string
  readonly message: string
  readonly unmatched: boolean
}

/** The tools a bundle holds in one catalog version, as the bundle names them. */
export interface BundleMembers<App = unknown> {
  /** In catalog order. */
  readonly all: readonly NamedTool<App>[]
  readonly byName: ReadonlyMap<string, NamedTool<App>>
}

/**
 * One bundle, compiled: which tools it holds (resolved against each catalog version as it
 * comes, so a tool an upstream adds that matches a glob joins at once), what it calls them,
 * and who may use it.
 */
export class Bundle {
  readonly name: string
  readonly description: string
  readonly discovery: boolean
  readonly patterns: readonly string[]
  readonly #globs: readonly RegExp[]
  readonly #aliases: BundleDeclaration['aliases']
  readonly #scopes: readonly string[]
  readonly #allow: Rule | boolean | undefined
  readonly #members = new WeakMap<readonly AnyTool[], BundleMembers<never>>()

  /** `where`: how errors name it (`upstreams file F: bundles.NAME`). Throws a `ConfigError` for an `allow` that does not compile. */
  constructor (name: string, declaration: BundleDeclaration, where: string) {
    this.name = name
    this.description = declaration.description
    this.discovery = declaration.discovery
    this.patterns = declaration.tools
    this.#globs = declaration.tools.map(compileGlob)
    this.#aliases = declaration.aliases
    this.#scopes = declaration.scopes ?? []
    this.#allow = compileRule(name, 'active', declaration.allow, `${where}.allow`)
  }

  /** Whether `principal` may use the bundle: every scope it names, and its `allow`. */
  mayUse (principal: Principal): boolean {
    for (const scope of this.#scopes) if (!principal.scopes.includes(scope)) return false
    const allow = this.#allow
    return allow === undefined || allow === true || (allow !== false && allow(undefined, principal))
  }

  /**
   * The bundle's tools among `tools` (one catalog version's, whose array is kept while the
   * version serves: resolved once per version). An alias's name wins over a tool's own id: a
   * tool added later under an alias's name is not in the bundle (the reload check refuses it).
   */
  membersOf<App> (tools: readonly AnyTool<App>[]): BundleMembers<App> {
    let members = this.#members.get(tools) as BundleMembers<App> | undefined
    if (members === undefined) {
      const named = tools.filter(tool => this.#globs.some(glob => glob.test(tool.id))).map(tool => this.#named(tool))
      const byName = new Map<string, NamedTool<App>>()
      for (const entry of named) if (entry.name !== entry.tool.id) byName.set(entry.name, entry)
      for (const entry of named) if (!byName.has(entry.name)) byName.set(entry.name, entry)
      const all = named.filter(entry => byName.get(entry.name) === entry)
      members = { all, byName }
      this.#members.set(tools, members)
    }
    return members
  }

  /**
   * What is wrong with the bundle against `tools`, named by field: a pattern that matches no
   * tool, an alias of a tool the bundle does not hold, two tools under one name.
   */
  problemsWith (tools: readonly AnyTool[]): BundleProblem[] {
    const problems: BundleProblem[] = []
    this.patterns.forEach((pattern, index) => {
      if (!tools.some(tool => this.#globs[index]!.test(tool.id))) problems.push({ field: `tools[${index}]`, message: `"${pattern}" matches no tool`, unmatched: true })
    })
    const held = tools.filter(tool => this.#globs.some(glob => glob.test(tool.id)))
    const heldIds = new Set(held.map(tool => tool.id))
    const named = new Map<string, string>()
    for (const id of Object.keys(this.#aliases)) {
      if (!heldIds.has(id)) problems.push({ field: `aliases.${id}`, message: `the bundle holds no tool "${id}"`, unmatched: false })
    }
    for (const tool of held) {
      const { name } = this.#named(tool)
      const other = named.get(name)
      if (other !== undefined) {
        const aliased = Object.hasOwn(this.#aliases, tool.id) ? tool.id : other
        problems.push({ field: `aliases.${aliased}.name`, message: `"${name}" is the name of two tools in the bundle ("${other}" and "${tool.id}")`, unmatched: false })
      } else {
        named.set(name, tool.id)
      }
    }
    return problems
  }

  #named<App> (tool: AnyTool<App>): NamedTool<App> {
    const alias = Object.hasOwn(this.#aliases, tool.id) ? this.#aliases[tool.id] : undefined
    if (alias === undefined) return ownNameOf(tool)
    return Object.freeze({ name: alias.name ?? tool.id, description: alias.description ?? tool.description, tool })
  }
}
