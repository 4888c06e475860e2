import { amountSchemaProblem } from '../../core/limits/amount.js'
import { compileLimit, type Limit } from '../../core/limits/limit.js'
import type { OperatorLimits } from '../../core/limits/limits.js'
import { toJsonSchema } from '../../core/schema.js'
import type { AnyTool, Effect } from '../../core/tool.js'
import { compileGlob } from '../auth/glob.js'
import { ConfigError } from '../config.js'
import type { OperatorLimitSpec } from '../upstreams/file.js'

/*
 * The operator's limits (the upstreams file's `limits`), for local and upstream tools alike.
 * A limit covers a call when the tool matches one of its `tools` (ids or globs) and declares
 * one of its `effects`, each when given; a limit with neither covers every call. A budget's
 * amount is checked against the input schema of every tool it covers, at start-up and on each
 * reload, so that `input.amout` stops the gateway naming the limit and the tool.
 */

interface Matched {
  readonly limit: Limit
  readonly tools?: readonly RegExp[]
  readonly effects?: readonly Effect[]
}

export class OperatorLimitSet {
  readonly #matched: readonly Matched[]

  constructor (specs: Readonly<Record<string, OperatorLimitSpec>>, readonly where = 'upstreams file') {
    this.#matched = Object.entries(specs).map(([name, spec]) => {
      let limit: Limit
      try {
        limit = compileLimit(name, spec, 'operator')
      } catch (error) {
        throw new ConfigError(`${where}: limits.${name}.budget.amount: ${(error as Error).message}`)
      }
      return {
        limit,
        ...(spec.tools === undefined ? {} : { tools: spec.tools.map(compileGlob) }),
        ...(spec.effects === undefined ? {} : { effects: spec.effects }),
      }
    })
  }

  get size (): number {
    return this.#matched.length
  }

  /** The limits that cover `tool`, in file order. */
  readonly of: OperatorLimits = tool => {
    const covering: Limit[] = []
    for (const { limit, tools, effects } of this.#matched) {
      if (tools !== undefined && !tools.some(glob => glob.test(tool.id))) continue
      if (effects !== undefined && !effects.some(effect => tool.effects.includes(effect))) continue
      covering.push(limit)
    }
    return covering
  }

  /** Refuse, naming the limit and the tool, a budget whose amount reads a field a covered tool's input lacks. */
  check (tools: readonly AnyTool[]): void {
    for (const tool of tools) {
      for (const limit of this.of(tool)) {
        if (limit.kind !== 'budget' || limit.amountText === undefined) continue
        const problem = amountSchemaProblem(limit.amountText, toJsonSchema(tool.inputSchema, 'output'))
        if (problem !== undefined) throw new ConfigError(`${this.where}: limits.${limit.name}.budget.amount ${problem} (tool "${tool.id}" is covered by it; narrow its tools or effects)`)
      }
    }
  }
}
