import { Environment } from '@marcbachmann/cel-js'
import { ConfigError } from '../config.js'
import type { OperatorDeclaration } from './file.js'

/*
 * The operator's `active`, `authorize` and `requiresApproval`: a constant, or a CEL expression
 * over `input` (the validated call input) and `principal` (`id`, `scopes`). Each expression is
 * parsed and type-checked once, when its tool is declared; evaluating one that fails (a key the
 * input does not have, a wrong type) fails closed: inactive, denied, approval required.
 * Effects are not variables: they are signals, never gates.
 */

/** What an expression sees of the caller. */
interface RuleCaller {
  readonly id: string
  readonly scopes: readonly string[]
}

export type Rule = (input: unknown, caller: RuleCaller) => boolean

const LIMITS = { maxAstNodes: 2_000, maxDepth: 64, maxListElements: 1_000, maxMapEntries: 1_000, maxCallArguments: 16 }

function environment (withInput: boolean): Environment {
  const env = new Environment({ limits: LIMITS })
  if (withInput) env.registerVariable('input', 'map')
  return env.registerVariable({ name: 'principal', schema: { id: 'string', scopes: 'list<string>' } })
}

// `active` is asked before any input exists: its expressions see the principal only.
const WITH_INPUT = environment(true)
const PRINCIPAL_ONLY = environment(false)

type Field = 'active' | 'authorize' | 'requiresApproval'

/**
 * The rule for `field` of tool `id`, or undefined when the operator wrote none. A syntax or type
 * error, or an expression that is not a boolean, is a `ConfigError` naming the tool and field.
 */
export function compileRule (id: string, field: Field, value: OperatorDeclaration[Field], where = `upstream tool "${id}": tools.${field}`): Rule | boolean | undefined {
  if (value === undefined || typeof value === 'boolean') return value
  const env = field === 'active' ? PRINCIPAL_ONLY : WITH_INPUT
  const fail = (problem: string): never => {
    throw new ConfigError(`${where}: ${problem}${field === 'active' ? ' (active sees only principal: there is no input yet)' : ''}`)
  }
  let checked: ReturnType<Environment['check']>
  try {
    checked = env.check(value)
  } catch (error) {
    return fail(firstLine(error))
  }
  if (!checked.valid) return fail(firstLine(checked.error))
  if (checked.type !== 'bool' && checked.type !== 'dyn') return fail(`is a ${String(checked.type)} expression; it must be a bool`)
  const evaluate = env.parse(value)
  // Closed: an expression that cannot answer makes the tool inactive, denies the call, or has a person decide.
  const onError = field === 'requiresApproval'
  return (input, caller) => {
    try {
      const result: unknown = evaluate({ input, principal: { id: caller.id, scopes: [...caller.scopes] } })
      return typeof result === 'boolean' ? result : onError
    } catch {
      return onError
    }
  }
}

function firstLine (error: unknown): string {
  const message = error instanceof Error ? error.message : String(error)
  return message.split('\n')[0]!.trim()
}
