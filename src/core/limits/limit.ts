import { celAmount, functionAmount, type Amount } from './amount.js'
import { AMOUNT_SCALE, type LimitAction, type LimitScope } from './declaration.js'
import { durationMs, fixedWindowOf, type FixedWindow } from './windows.js'

/*
 * A limit as the pipeline uses it, compiled once from its declaration: its kind's numbers in
 * integer units (a call is one unit of a rate or quota; a budget counts amounts in
 * 1/AMOUNT_SCALE), its window, and for a budget the amount of a call.
 */

interface LimitBase {
  /** Unique among the limits that apply: an operator's by its key, a tool's as `{tool}.{name}`. */
  readonly name: string
  readonly per: LimitScope
  readonly over: LimitAction
  readonly description?: string
  /** Who declared it: the operator (upstreams file) or the tool. */
  readonly declaredBy: 'operator' | 'tool'
  /** The window as written (`1h`, `day`). */
  readonly window: string
}

interface RateLimit extends LimitBase {
  readonly kind: 'rate'
  readonly calls: number
  readonly burst: number
  readonly periodMs: number
}

interface QuotaLimit extends LimitBase {
  readonly kind: 'quota'
  readonly calls: number
  readonly fixed: FixedWindow
}

interface BudgetLimit extends LimitBase {
  readonly kind: 'budget'
  /** In the declared currency of the amounts. */
  readonly max: number
  readonly fixed: FixedWindow
  readonly amount: Amount
  /** The CEL text of the amount, for listings (absent: a function). */
  readonly amountText?: string
}

export type Limit = RateLimit | QuotaLimit | BudgetLimit

/** A declaration that passed its schema (`declaration.ts`), whoever wrote it. */
export interface LimitSpec {
  readonly per: LimitScope
  readonly over: LimitAction
  readonly description?: string
  readonly rate?: { readonly calls: number, readonly window: string, readonly burst?: number }
  readonly quota?: { readonly calls: number, readonly window: string }
  readonly budget?: { readonly amount: string | ((input: never) => number), readonly max: number, readonly window: string }
}

/** Compile a checked declaration; a CEL amount that does not compile throws its reason. */
export function compileLimit (name: string, spec: LimitSpec, declaredBy: Limit['declaredBy']): Limit {
  const base = { name, per: spec.per, over: spec.over, declaredBy, ...(spec.description === undefined ? {} : { description: spec.description }) }
  if (spec.rate !== undefined) {
    const { calls, window, burst } = spec.rate
    return Object.freeze({ ...base, kind: 'rate', window, calls, burst: burst ?? calls, periodMs: durationMs(window)! })
  }
  if (spec.quota !== undefined) {
    const { calls, window } = spec.quota
    return Object.freeze({ ...base, kind: 'quota', window, calls, fixed: fixedWindowOf(window)! })
  }
  const { amount, max, window } = spec.budget!
  const compiled = typeof amount === 'string' ? celAmount(amount) : functionAmount(amount as (input: unknown) => unknown)
  return Object.freeze({
    ...base, kind: 'budget', window, max, fixed: fixedWindowOf(window)!, amount: compiled,
    ...(typeof amount === 'string' ? { amountText: amount } : {}),
  })
}

/** An amount in the integer units the stores count (a positive amount is never rounded to nothing). */
export function unitsOf (amount: number): number {
  // Capped where integers stay exact (any cap is past every budget's maximum): a huge amount is a call too large, never Infinity in a store.
  const units = Math.min(Math.round(amount * AMOUNT_SCALE), Number.MAX_SAFE_INTEGER)
  return units === 0 && amount > 0 ? 1 : units
}

export function amountOf (units: number): number {
  return units / AMOUNT_SCALE
}
