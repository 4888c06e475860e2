import { Environment } from '@marcbachmann/cel-js'
import type { JsonSchema } from '../json-schema.js'

/*
 * A budget's amount: how much one call spends, from its parsed input. Written as a CEL
 * expression over `input` (the operator's file, or a tool's declaration) or as a function (a
 * tool's declaration). Parsed and type-checked once, where the limit is declared; its fields
 * are checked against the tool's input schema where the schema says enough. At a call, an
 * amount that is not a finite number >= 0, or that cannot be evaluated, refuses the call.
 */

export type Amount = (input: unknown) => number

const ENV = new Environment({ limits: { maxAstNodes: 2_000, maxDepth: 64, maxListElements: 1_000, maxMapEntries: 1_000, maxCallArguments: 16 } })
  .registerVariable('input', 'map')

// JSON numbers reach CEL as doubles and its literals `2` as ints, which CEL will not mix:
// `input.quantity * 2` must work as written, so each arithmetic operator takes both.
const ARITHMETIC = { '+': (a: number, b: number) => a + b, '-': (a: number, b: number) => a - b, '*': (a: number, b: number) => a * b, '/': (a: number, b: number) => a / b }
for (const [op, apply] of Object.entries(ARITHMETIC)) {
  ENV.registerOperator(`double ${op} int: double`, (a: number, b: bigint) => apply(a, Number(b)))
  ENV.registerOperator(`int ${op} double: double`, (a: bigint, b: number) => apply(Number(a), b))
}

/** Why an amount is refused at a call (the limit's name is added by whoever reports it). */
export class AmountProblem extends Error {
  constructor (message: string) {
    super(message)
    this.name = 'AmountProblem'
  }
}

/** A CEL expression as an amount; throws with the reason when it does not parse or cannot be a number. */
export function celAmount (expression: string): Amount {
  let checked: ReturnType<Environment['check']>
  try {
    checked = ENV.check(expression)
  } catch (error) {
    throw new Error(firstLine(error))
  }
  if (!checked.valid) throw new Error(firstLine(checked.error))
  if (!['int', 'uint', 'double', 'dyn'].includes(String(checked.type))) throw new Error(`is a ${String(checked.type)} expression; an amount is a number`)
  const evaluate = ENV.parse(expression)
  return input => {
    let value: unknown
    try {
      value = evaluate({ input })
    } catch (error) {
      throw new AmountProblem(`its amount (${expression}) cannot be evaluated for this input: ${firstLine(error)}`)
    }
    return checkedAmount(value, expression)
  }
}

/** A function as an amount: what it returns (or throws) is checked as a CEL result is. */
export function functionAmount (amount: (input: unknown) => unknown): Amount {
  return input => {
    let value: unknown
    try {
      value = amount(input)
    } catch (error) {
      throw new AmountProblem(`its amount cannot be computed for this input: ${firstLine(error)}`)
    }
    return checkedAmount(value, 'the declared function')
  }
}

function checkedAmount (value: unknown, what: string): number {
  const amount = typeof value === 'bigint' ? Number(value) : value
  if (typeof amount !== 'number' || !Number.isFinite(amount)) throw new AmountProblem(`its amount (${what}) is ${describe(value)}, not a number`)
  if (amount < 0) throw new AmountProblem(`its amount (${what}) is ${amount}, below zero`)
  return amount
}

const PATH = /\binput((?:\.[A-Za-z_]\w*)+)/g

/**
 * The problem with `expression` against the tool's input schema, or undefined: each
 * `input.a.b` it reads must be a property the schema declares (where the schema lists its
 * properties and allows no others), and a number where the schema types it.
 */
export function amountSchemaProblem (expression: string, schema: JsonSchema): string | undefined {
  for (const match of expression.matchAll(PATH)) {
    const keys = match[1]!.slice(1).split('.')
    let at: JsonSchema | undefined = schema
    for (const [i, key] of keys.entries()) {
      const properties = at?.properties as Record<string, JsonSchema> | undefined
      if (properties === undefined) break
      const next: JsonSchema | undefined = Object.hasOwn(properties, key) ? properties[key] : undefined
      if (next === undefined) {
        if (at?.additionalProperties === false || at?.additionalProperties === undefined) return `reads input.${keys.slice(0, i + 1).join('.')}, which the tool's input does not have`
        break
      }
      at = next
      if (i === keys.length - 1 && !numeric(at)) return `reads input.${keys.join('.')}, which the tool's input types as ${JSON.stringify(at.type)}, not a number`
    }
  }
  return undefined
}

function numeric (schema: JsonSchema): boolean {
  const type = schema.type
  if (type === undefined) return true
  const types = Array.isArray(type) ? type : [type]
  return types.includes('number') || types.includes('integer')
}

function describe (value: unknown): string {
  if (typeof value === 'string') return `the string ${JSON.stringify(value.slice(0, 40))}`
  if (value === null) return 'null'
  if (typeof value === 'number') return String(value)
  return `a ${typeof value === 'object' ? (Array.isArray(value) ? 'list' : 'map') : typeof value}`
}

function firstLine (error: unknown): string {
  const message = error instanceof Error ? error.message : String(error)
  return message.split('\n')[0]!.trim()
}
