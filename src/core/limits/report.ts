import { GatewayError } from '../errors.js'
import { amountOf, type Limit } from './limit.js'
import type { EntryState } from './store.js'

/*
 * What one limit says of one call, in the words callers read: the report that problem bodies,
 * `GET /limits`, dry runs and the RateLimit fields show, and the refusals past a count.
 */

/** One limit as one call sees it: what the call spends of it and what is left. */
export interface LimitUse {
  readonly limit: Limit
  /** Calls (1) for a rate or quota; the amount for a budget. */
  readonly spends: number
  readonly state: EntryState
}

/** The report of one limit, as problem bodies, `GET /limits` and dry runs show it. */
export interface LimitReport {
  readonly name: string
  readonly kind: Limit['kind']
  readonly per: Limit['per']
  readonly over: Limit['over']
  readonly window: string
  /** Calls per window (rate, quota) or the budget's maximum amount. */
  readonly max: number
  /** What is left: calls, or the budget's amount. */
  readonly remaining: number
  /** Seconds until the count is whole again (a window's end; a rate back to its burst). */
  readonly resetSeconds: number
  /** The window's length in seconds (a calendar month's, this month). */
  readonly windowSeconds: number
  /** What this call spends (or would spend) of it. */
  readonly spends: number
  readonly description?: string
}

export function reportOf ({ limit, spends, state }: LimitUse): LimitReport {
  return {
    name: limit.name, kind: limit.kind, per: limit.per, over: limit.over, window: limit.window,
    max: limit.kind === 'budget' ? limit.max : limit.calls,
    remaining: limit.kind === 'budget' ? amountOf(state.remaining) : state.remaining,
    resetSeconds: Math.max(0, Math.ceil(state.resetMs / 1000)),
    windowSeconds: Math.round(windowMs(limit, state) / 1000),
    spends,
    ...(limit.description === undefined ? {} : { description: limit.description }),
  }
}

function windowMs (limit: Limit, state: EntryState): number {
  if (limit.kind === 'rate') return limit.periodMs
  // The window this state is in: the one that holds its last millisecond.
  const { start, end } = limit.fixed.bounds(Date.now() + Math.max(0, state.resetMs - 1))
  return end - start
}

export function refusal (use: LimitUse): GatewayError {
  const report = reportOf(use)
  const { limit, state } = use
  const what = limit.kind === 'budget' ? `spends ${use.spends} of budget "${limit.name}" (${limit.max} a ${limit.window})` : `is over ${limit.kind} "${limit.name}" (${report.max} calls per ${limit.window})`
  if (state.retryAfterMs === Infinity) {
    return new GatewayError('TOOLGATE_LIMIT_TOO_LARGE', `this call ${what}: more than a whole window allows, so it can never run as it is`, { limit: report })
  }
  const retryAfter = Math.max(1, Math.ceil(state.retryAfterMs / 1000))
  return new GatewayError('TOOLGATE_LIMIT_EXCEEDED', `this call ${what}${limit.kind === 'budget' ? `, and ${report.remaining} is left` : ''}; retry in ${retryAfter} s`, { retryAfter, limit: { ...report, retryAfterSeconds: retryAfter } })
}

export function crowded (limit: Limit, now: number): GatewayError {
  const resetMs = limit.kind === 'rate' ? limit.periodMs : limit.fixed.bounds(now).end - now
  const retryAfter = Math.max(1, Math.ceil(resetMs / 1000))
  return new GatewayError('TOOLGATE_LIMIT_EXCEEDED', `"${limit.name}" is kept per session, and your principal holds as many sessions under it as it may; call from a session you used before, or retry in ${retryAfter} s`, { retryAfter, limit: { name: limit.name, kind: limit.kind, per: limit.per, window: limit.window } })
}
