import { z } from 'zod'
import { durationMs, fixedWindowOf } from './windows.js'

/*
 * What a limit declaration may say, in one schema for both places it is written: a tool's own
 * `limits` (in TypeScript, where a budget's amount may also be a function of the typed input)
 * and the operator's `limits` in the upstreams file (data: the amount is a CEL expression, and
 * the limit says which tools it covers). Unknown fields and unparsable windows are refused.
 */

/** Whose calls share one count: each principal's, each session's (of a principal), or everyone's. */
export const LIMIT_SCOPES = ['principal', 'session', 'global'] as const
export type LimitScope = typeof LIMIT_SCOPES[number]

/** Past the limit: the call is refused (429), or becomes an approval a person decides. */
export const LIMIT_ACTIONS = ['refuse', 'approve'] as const
export type LimitAction = typeof LIMIT_ACTIONS[number]

export const LIMIT_NAME = /^[a-z][a-z0-9_-]{0,63}$/

/** Budget amounts are counted to this many parts of one (four decimal places), as integers. */
export const AMOUNT_SCALE = 10_000
/** The largest budget maximum: its units stay exact integers in Redis's Lua doubles. */
const MAX_BUDGET = 100_000_000_000

const calls = z.number().int().min(1).max(1_000_000_000)
const duration = z.string().refine(text => durationMs(text) !== undefined, 'a duration from 1s to 366d: a whole number then ms, s, m, h or d (e.g. "10m", "1h")')
const fixedWindow = z.string().refine(text => fixedWindowOf(text) !== undefined, 'minute, hour, day, week or month (UTC), or a duration such as "6h"')

const Rate = z.object({
  /** Calls per `window`, refilled continuously. */
  calls,
  window: duration,
  /** How many may come at once (default: `calls`). */
  burst: calls.optional(),
}).strict()

const Quota = z.object({ calls, window: fixedWindow }).strict()

/** A CEL expression over `input`, or (in a tool's own declaration) a function of the parsed input. */
const celAmount = z.string().trim().min(1).max(4096)
// eslint-disable-next-line @typescript-eslint/no-explicit-any -- any input type: the tool's own
type AmountFunction = (input: any) => number
const amountFunction = z.custom<AmountFunction>(value => typeof value === 'function', 'a CEL expression over input, or a function (input) => number')

const budgetOf = <A extends z.ZodType>(amount: A) => z.object({
  amount,
  max: z.number().positive().max(MAX_BUDGET),
  window: fixedWindow,
}).strict()

const body = <A extends z.ZodType>(amount: A) => ({
  per: z.enum(LIMIT_SCOPES),
  over: z.enum(LIMIT_ACTIONS).default('refuse'),
  description: z.string().trim().min(1).max(512).optional(),
  rate: Rate.optional(),
  quota: Quota.optional(),
  budget: budgetOf(amount).optional(),
})

function oneKind (limit: { rate?: unknown, quota?: unknown, budget?: unknown }, ctx: z.RefinementCtx): void {
  const kinds = (['rate', 'quota', 'budget'] as const).filter(kind => limit[kind] !== undefined)
  if (kinds.length !== 1) ctx.addIssue({ code: 'custom', message: kinds.length === 0 ? 'needs one of rate, quota or budget' : `has ${kinds.join(' and ')}: one kind per limit` })
}

/** One entry of a tool's `limits`: it covers that tool's calls. */
export const ToolLimitDeclarationSchema = z.object({
  name: z.string().regex(LIMIT_NAME, 'a lowercase name: a letter, then letters, digits, _ or -'),
  ...body(z.union([celAmount, amountFunction])),
}).strict().superRefine(oneKind)

/** Which calls an operator's limit covers: tools by id or glob, and tools declaring any of `effects` (both, when both are given). */
export const OperatorLimitSchema = <G extends z.ZodType, E extends z.ZodType>(glob: G, effect: E) => z.object({
  tools: z.array(glob).min(1).optional(),
  effects: z.array(effect).min(1).optional(),
  ...body(celAmount),
}).strict().superRefine(oneKind)

export type ToolLimitDeclaration = z.input<typeof ToolLimitDeclarationSchema>
