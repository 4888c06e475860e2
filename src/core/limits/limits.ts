import { GatewayError } from '../errors.js'
import type { AnyTool } from '../tool.js'
import { AmountProblem } from './amount.js'
import { amountOf, unitsOf, type Limit } from './limit.js'
import { crowded, refusal, type LimitUse } from './report.js'
import { MemoryLimitStore } from './memory-store.js'
import type { Decision, EntryState, LimitEntry, LimitStore } from './store.js'

/*
 * The limits of a gateway: which cover a tool (the operator's, matched by tool and effect, then
 * the tool's own) and what one call does to them. A call is charged in one atomic decision over
 * every limit that covers it, right before it is scheduled, so that only calls that run spend;
 * a call that never began is refunded. Past a refusing limit the call is a 429 naming the limit
 * that frees last; past an asking one it becomes an approval (`LimitAsk`), and an approved call
 * is charged when it runs, even past the count a person let it pass.
 */

/** Whose counts a call is kept in: its principal, and its session (the concurrency domain). */
export interface LimitCaller {
  readonly principal: string
  readonly session: string
}

/** The operator's limits that cover `tool` (in the order declared). */
export type OperatorLimits = (tool: AnyTool) => readonly Limit[]

export interface LimitsOptions {
  /** Default: in process, bounded (`MemoryLimitStore`). */
  readonly store?: LimitStore
  readonly operator?: OperatorLimits
  /** Sessions one principal may hold under one session limit at once (default 64). */
  readonly maxSessions?: number
  readonly now?: () => number
}

/** What a call spent, to give back when it never began. */
export interface Charge {
  readonly entries: readonly LimitEntry[]
  readonly uses: readonly LimitUse[]
}

/** Thrown by `charge` when limits past their count ask a person first: the call becomes an approval. */
export class LimitAsk extends Error {
  constructor (readonly limits: readonly Limit[]) {
    super(`past ${limits.map(limit => `"${limit.name}"`).join(', ')}: a person decides`)
    this.name = 'LimitAsk'
  }
}

const DEFAULT_MAX_SESSIONS = 64

export class Limits {
  readonly #store: LimitStore
  readonly #operator: OperatorLimits | undefined
  readonly #maxSessions: number
  readonly #now: () => number
  // Per tool value: a reload defines new tools, so a changed declaration is seen at once.
  readonly #covering = new WeakMap<AnyTool, readonly Limit[]>()

  constructor (options: LimitsOptions = {}) {
    this.#store = options.store ?? new MemoryLimitStore()
    this.#operator = options.operator
    this.#maxSessions = options.maxSessions ?? DEFAULT_MAX_SESSIONS
    this.#now = options.now ?? Date.now
  }

  /** Every limit that covers `tool`: the operator's first, then the tool's own. */
  of (tool: AnyTool): readonly Limit[] {
    let limits = this.#covering.get(tool)
    if (limits === undefined) {
      const operator = this.#operator?.(tool) ?? []
      limits = operator.length === 0 ? tool.limits : Object.freeze([...operator, ...tool.limits])
      this.#covering.set(tool, limits)
    }
    return limits
  }

  /**
   * Charge one call of `tool` against every limit that covers it: undefined (synchronously) when
   * none does. `approved`: a person let this call pass, so asking limits take it past their count.
   * Throws the 429 or 422 of a refusing limit, the 400 of an amount that cannot be read, or a
   * `LimitAsk`.
   */
  charge (tool: AnyTool, input: unknown, caller: LimitCaller, approved: boolean): Charge | undefined | Promise<Charge> {
    const limits = this.of(tool)
    if (limits.length === 0) return undefined
    const now = this.#now()
    const entries = this.#entries(limits, input, caller, now, approved, false)
    const deciding = this.#decide(entries, now, true)
    const charged = (decision: Decision): Charge => ({ entries, uses: this.#settle(limits, entries, decision, now) })
    return deciding instanceof Promise ? deciding.then(charged) : charged(deciding)
  }

  /** What the call would spend and what would be left, spending nothing (a dry run). */
  async peek (tool: AnyTool, input: unknown, caller: LimitCaller): Promise<readonly LimitUse[]> {
    const limits = this.of(tool)
    if (limits.length === 0) return []
    const now = this.#now()
    const entries = this.#entries(limits, input, caller, now, false, false)
    const decision = await this.#decide(entries, now, false)
    if (decision.type === 'crowded') throw crowded(limits[decision.index]!, now)
    return usesOf(limits, entries, decision.states)
  }

  /** Where `limits` stand for `caller` now, charging nothing (`GET /limits`). */
  async standing (limits: readonly Limit[], caller: LimitCaller): Promise<readonly LimitUse[]> {
    if (limits.length === 0) return []
    const now = this.#now()
    const entries = this.#entries(limits, undefined, caller, now, false, true)
    const decision = await this.#decide(entries, now, false)
    // A principal whose sessions fill a session limit still sees the others.
    if (decision.type === 'crowded') return await this.standing(limits.filter((_, i) => i !== decision.index), caller)
    return usesOf(limits, entries, decision.states)
  }

  /** Give back what `charge` took: the call never began. A store that fails keeps the charge. */
  async refund (charge: Charge): Promise<void> {
    try {
      await this.#store.refund(charge.entries, this.#now())
    } catch { /* the charge stands until its window ends: it errs towards fewer calls, never more */ }
  }

  /** A store that cannot decide fails the call closed: 503, nothing runs, nothing is charged. */
  #decide (entries: readonly LimitEntry[], now: number, take: boolean): Decision | Promise<Decision> {
    let deciding: Decision | Promise<Decision>
    try {
      deciding = this.#store.decide(entries, now, take)
    } catch (error) {
      throw unavailable(error)
    }
    return deciding instanceof Promise ? deciding.catch((error: unknown) => { throw unavailable(error) }) : deciding
  }

  #settle (limits: readonly Limit[], entries: readonly LimitEntry[], decision: Decision, now: number): readonly LimitUse[] {
    switch (decision.type) {
      case 'taken':
        return usesOf(limits, entries, decision.states)
      case 'crowded':
        throw crowded(limits[decision.index]!, now)
      case 'ask':
        throw new LimitAsk(decision.indexes.map(i => limits[i]!))
      case 'refused': {
        const use = usesOf(limits, entries, decision.states)[decision.index]!
        throw refusal(use)
      }
    }
  }

  /** The store's entries for `limits`: keys per scope and window, costs from the input (`free`: none). */
  #entries (limits: readonly Limit[], input: unknown, caller: LimitCaller, now: number, approved: boolean, free: boolean): LimitEntry[] {
    const entries: LimitEntry[] = []
    for (const limit of limits) {
      const asks = limit.over === 'approve'
      const group = limit.per === 'session'
        ? { key: `${limit.name}|sessions|${sized(caller.principal)}`, member: caller.session, max: this.#maxSessions }
        : undefined
      let key = `${limit.name}|${scopeKey(limit, caller)}`
      if (limit.kind === 'rate') {
        const intervalMs = rateIntervalMs(limit.periodMs, limit.calls)
        entries.push({ key, type: 'rate', cost: free ? 0 : 1, max: 0, endsAt: 0, intervalMs, toleranceMs: intervalMs * limit.burst, asks, force: approved, group })
        continue
      }
      const { start, end } = limit.fixed.bounds(now)
      key += `|${start}`
      const cost = free ? 0 : limit.kind === 'quota' ? 1 : unitsOf(amountFor(limit, input))
      const max = limit.kind === 'quota' ? limit.calls : unitsOf(limit.max)
      entries.push({ key, type: 'window', cost, max, endsAt: end, intervalMs: 0, toleranceMs: 0, asks, force: approved, group })
    }
    return entries
  }
}

function unavailable (error: unknown): GatewayError {
  if (error instanceof GatewayError) return error
  return new GatewayError('TOOLGATE_STORE_UNAVAILABLE', 'the limits\' store cannot be reached', { retryAfter: 1 }, { cause: error })
}

/**
 * What one call adds to a rate's arrival time: whole milliseconds, so that the arrival times
 * (near 1.8e12) stay exact doubles in memory and in Redis's Lua; a rate thus counts at most
 * 1,000 calls a second per key.
 */
function rateIntervalMs (periodMs: number, calls: number): number {
  return Math.max(1, Math.round(periodMs / calls))
}

function amountFor (limit: Limit & { kind: 'budget' }, input: unknown): number {
  try {
    return limit.amount(input)
  } catch (error) {
    if (!(error instanceof AmountProblem)) throw error
    throw new GatewayError('TOOLGATE_LIMIT_AMOUNT_INVALID', `budget "${limit.name}": ${error.message}; nothing ran and nothing was charged`, { limit: limit.name })
  }
}

function scopeKey (limit: Limit, caller: LimitCaller): string {
  switch (limit.per) {
    case 'global': return 'g'
    case 'principal': return `p${sized(caller.principal)}`
    case 'session': return `s${sized(caller.principal)}${sized(caller.session)}`
  }
}

/** A length-prefixed part of a key: no principal or session name can forge another's key. */
function sized (text: string): string {
  return `${text.length}:${text}`
}

function usesOf (limits: readonly Limit[], entries: readonly LimitEntry[], states: readonly EntryState[]): LimitUse[] {
  return limits.map((limit, i) => ({ limit, spends: limit.kind === 'budget' ? amountOf(entries[i]!.cost) : 1, state: states[i]! }))
}
