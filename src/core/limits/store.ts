/*
 * Where limits keep their counts, and the arithmetic both stores share. One decision covers
 * every limit a call is under and is atomic: either each count takes the call, or none is
 * touched. The in-process store runs `decide` below; the Redis store runs the same rules in one
 * script (src/services/redis/limit-script.ts), so two replicas never both take the last unit.
 *
 * A fixed window (quota, budget) keeps the units used in it, under a key naming the window, that
 * expires when the window ends. A rate keeps its GCRA "theoretical arrival time": a call costs
 * `periodMs / calls` per unit, and may come while that time is at most `burst` intervals ahead.
 */

export interface LimitEntry {
  readonly key: string
  readonly type: 'window' | 'rate'
  /** Units this call takes (0 to read the count only). */
  readonly cost: number
  /** Window: the units it allows. */
  readonly max: number
  /** Window: when it ends (epoch ms); its key expires then. */
  readonly endsAt: number
  /** Rate: milliseconds one unit adds to the arrival time, whole (`rateIntervalMs`): fractions near 1.8e12 ms would round past the tolerance. */
  readonly intervalMs: number
  /** Rate: how far ahead the arrival time may run (`burst` intervals). */
  readonly toleranceMs: number
  /** Past it the call asks a person rather than being refused. */
  readonly asks: boolean
  /** Charge it even when past it (a call a person approved). */
  readonly force: boolean
  /** Session limits: the principal's set of sessions under this limit, bounded. */
  readonly group?: { readonly key: string, readonly member: string, readonly max: number }
}

/** What one entry says about the call. */
export interface EntryState {
  readonly allowed: boolean
  /** Units left after this call (when it is taken) or now (when it is not). */
  readonly remaining: number
  /** Until the count is back to whole (window: its end; rate: the arrival time). */
  readonly resetMs: number
  /** Until this call could be taken (0 when it is; Infinity when it never fits a window). */
  readonly retryAfterMs: number
}

export type Decision =
  | { readonly type: 'taken', readonly states: readonly EntryState[] }
  | { readonly type: 'refused', readonly index: number, readonly states: readonly EntryState[] }
  | { readonly type: 'ask', readonly indexes: readonly number[], readonly states: readonly EntryState[] }
  /** The principal holds as many sessions under a session limit as it may. */
  | { readonly type: 'crowded', readonly index: number }

export interface LimitStore {
  /** Decide the call over `entries`; with `take`, charge every entry when the call is taken. */
  decide (entries: readonly LimitEntry[], now: number, take: boolean): Decision | Promise<Decision>
  /** Give back what a taken call charged (it never began). */
  refund (entries: readonly LimitEntry[], now: number): void | Promise<void>
}

/** One entry against its stored value (`stored`: units used, or a rate's arrival time). */
export function evaluate (entry: LimitEntry, stored: number | undefined, now: number): EntryState & { readonly next: number, readonly expiresAt: number } {
  if (entry.type === 'window') {
    const used = stored ?? 0
    const next = used + entry.cost
    const allowed = next <= entry.max
    const resetMs = entry.endsAt - now
    return {
      allowed, next, expiresAt: entry.endsAt, resetMs,
      remaining: Math.max(0, entry.max - (allowed || forced(entry) ? next : used)),
      retryAfterMs: allowed ? 0 : entry.cost > entry.max ? Infinity : resetMs,
    }
  }
  const tat = Math.max(stored ?? now, now)
  const next = tat + entry.cost * entry.intervalMs
  const allowed = next - now <= entry.toleranceMs
  const at = allowed || forced(entry) ? next : tat
  return {
    allowed, next, expiresAt: next,
    remaining: Math.max(0, Math.floor((entry.toleranceMs - (at - now)) / entry.intervalMs)),
    resetMs: at - now,
    retryAfterMs: allowed ? 0 : entry.cost * entry.intervalMs > entry.toleranceMs ? Infinity : next - entry.toleranceMs - now,
  }
}

/** An asking entry a person let past its count: it is charged, and its state says so. */
function forced (entry: LimitEntry): boolean {
  return entry.asks && entry.force
}

/**
 * The rules over every entry: a refusing entry past its count refuses (the one that frees
 * last is named); else an asking one past its count, unless forced, asks; else the call is taken.
 */
export function verdictOf (entries: readonly LimitEntry[], states: readonly EntryState[]): Decision {
  let refused = -1
  let asks: number[] | undefined
  for (let i = 0; i < entries.length; i++) {
    const entry = entries[i]!
    const state = states[i]!
    if (state.allowed || forced(entry)) continue
    if (entry.asks) (asks ??= []).push(i)
    else if (refused === -1 || state.retryAfterMs > states[refused]!.retryAfterMs) refused = i
  }
  if (refused !== -1) return { type: 'refused', index: refused, states }
  if (asks !== undefined) return { type: 'ask', indexes: asks, states }
  return { type: 'taken', states }
}

/** What a refund leaves of a stored value. */
export function refunded (entry: LimitEntry, stored: number): number {
  return entry.type === 'window' ? Math.max(0, stored - entry.cost) : stored - entry.cost * entry.intervalMs
}
