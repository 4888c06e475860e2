import { toJsonSchema, type ToolSchema } from '../schema.js'
import { amountSchemaProblem } from './amount.js'
import { ToolLimitDeclarationSchema } from './declaration.js'
import { compileLimit, type Limit } from './limit.js'

/*
 * A tool's own `limits`, checked and compiled where the tool is defined: each is named
 * `{tool}.{name}`, and a budget's CEL amount is checked against the tool's input schema, so a
 * typo stops the start (or the reload) naming the tool and the field.
 */

type Fail = (field: string, problem: string) => never

export function toolLimitsOf (id: string, value: unknown, inputSchema: ToolSchema, fail: Fail): readonly Limit[] {
  if (value === undefined) return Object.freeze([])
  if (!Array.isArray(value)) return fail('limits', 'must be an array of limits ({ name, per, rate | quota | budget, over })')
  const names = new Set<string>()
  const limits = value.map((raw, i) => {
    const parsed = ToolLimitDeclarationSchema.safeParse(raw)
    if (!parsed.success) {
      const issue = parsed.error.issues[0]!
      return fail(['limits', i, ...issue.path].join('.'), issueText(issue))
    }
    const spec = parsed.data
    if (names.has(spec.name)) fail(`limits.${i}.name`, `repeats "${spec.name}"; each limit of a tool has its own name`)
    names.add(spec.name)
    const amount = spec.budget?.amount
    if (typeof amount === 'string') {
      const problem = amountSchemaProblem(amount, toJsonSchema(inputSchema, 'output'))
      if (problem !== undefined) fail(`limits.${i}.budget.amount`, problem)
    }
    try {
      return compileLimit(`${id}.${spec.name}`, spec, 'tool')
    } catch (error) {
      return fail(`limits.${i}.budget.amount`, (error as Error).message)
    }
  })
  return Object.freeze(limits)
}

/** A zod issue as a message: an unknown key names itself. */
export function issueText (issue: { readonly code: string, readonly message: string, readonly keys?: readonly string[], readonly issues?: ReadonlyArray<{ readonly message: string }> }): string {
  if (issue.code === 'unrecognized_keys' && issue.keys !== undefined) return `unknown key${issue.keys.length > 1 ? 's' : ''} ${issue.keys.map(key => `"${key}"`).join(', ')}`
  // A record's key that is not of its shape: what the shape is, not zod's "Invalid key in record".
  if (issue.code === 'invalid_key' && issue.issues?.[0] !== undefined) return `not ${issue.issues[0].message}`
  return issue.message
}
