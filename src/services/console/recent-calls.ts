import { z } from 'zod'
import type { CallRecord } from '../../core/call-record.js'

/** One finished call as the operators' console lists it: what happened, never its input or output. */
export const CallSummarySchema = z.object({
  seq: z.number().int().describe('This replica\'s sequence number: `after` in the next read'),
  callId: z.string(),
  time: z.string().describe('When the call entered the pipeline (ISO 8601)'),
  tool: z.string(),
  kind: z.string(),
  effects: z.array(z.string()),
  principal: z.string(),
  transport: z.string().describe('`rest`, `mcp`, `mcp-stdio` or `intents`'),
  bundle: z.string().optional(),
  outcome: z.string(),
  status: z.number().int(),
  code: z.string().optional(),
  durationMs: z.number(),
  queueMs: z.number(),
  executed: z.boolean().describe('`execute` began: the call may have taken effect'),
  dryRun: z.boolean(),
  replayed: z.boolean(),
  traceId: z.string().optional(),
  approvalId: z.string().optional(),
  limit: z.string().optional().describe('The limit that refused the call or asked a person'),
}).meta({ id: 'CallSummary' })
type CallSummary = z.output<typeof CallSummarySchema>

/** What the ring keeps of a call: plain fields only, so a record's failure or steps are not held alive. */
interface Kept {
  readonly callId: string
  readonly startedAt: number
  readonly toolId: string
  readonly kind: string
  readonly effects: readonly string[]
  readonly principal: string
  readonly transport: string | undefined
  readonly bundle: string | undefined
  readonly outcome: string
  readonly status: number
  readonly code: string | undefined
  readonly durationMs: number
  readonly queueMs: number
  readonly executed: boolean
  readonly dryRun: boolean
  readonly traceId: string | undefined
  readonly approvalId: string | undefined
  readonly limit: string | undefined
}

/**
 * The latest finished calls of this replica, for the console: a ring of `capacity` (memory is
 * bounded whatever the traffic), read after a sequence number. Adding keeps one small object of
 * plain fields; the summary is built only when someone reads. Readers may wait for the next call
 * (long polling), each woken once, with no timer per call.
 */
export class RecentCalls {
  readonly #kept: Array<Kept | undefined>
  #next = 1
  readonly #waiting = new Set<() => void>()

  constructor (readonly capacity = 500) {
    this.#kept = new Array<Kept | undefined>(capacity)
  }

  /** The sequence number the next call will get: `after` for a reader that wants only new ones. */
  get next (): number {
    return this.#next
  }

  /** Keep a finished call, with who made it and the trace and approval it ran under. */
  add (record: CallRecord, principal: string, traceId?: string, approvalId?: string): void {
    this.#kept[this.#next % this.capacity] = {
      callId: record.callId, startedAt: record.startedAt, toolId: record.toolId, kind: record.kind, effects: record.effects,
      principal, transport: record.transport, bundle: record.bundle, outcome: record.outcome, status: record.status,
      code: record.code, durationMs: record.durationMs, queueMs: record.queueMs, executed: record.executed, dryRun: record.dryRun,
      traceId, approvalId, limit: record.limit,
    }
    this.#next++
    if (this.#waiting.size > 0) {
      for (const wake of this.#waiting) wake()
      this.#waiting.clear()
    }
  }

  /** The calls after `after` still held, oldest first, at most `max` (the newest of them). */
  after (after: number, max: number): CallSummary[] {
    const newest = this.#next - 1
    const from = Math.max(after + 1, newest - Math.min(max, this.capacity) + 1, 1)
    const calls: CallSummary[] = []
    for (let seq = from; seq <= newest; seq++) calls.push(summaryOf(seq, this.#kept[seq % this.capacity]!))
    return calls
  }

  /** Resolves when a call past `after` is held, or after `ms`, or when `signal` aborts (a client gone). */
  async waitAfter (after: number, ms: number, signal?: AbortSignal): Promise<void> {
    if (this.#next - 1 > after || ms <= 0 || signal?.aborted === true) return
    await new Promise<void>(resolve => {
      const done = (): void => {
        clearTimeout(timer)
        this.#waiting.delete(done)
        signal?.removeEventListener('abort', done)
        resolve()
      }
      const timer = setTimeout(done, ms)
      this.#waiting.add(done)
      signal?.addEventListener('abort', done, { once: true })
    })
  }
}

function summaryOf (seq: number, kept: Kept): CallSummary {
  return {
    seq,
    callId: kept.callId,
    time: new Date(kept.startedAt).toISOString(),
    tool: kept.toolId,
    kind: kept.kind,
    effects: [...kept.effects],
    principal: kept.principal,
    transport: kept.transport ?? 'rest',
    ...(kept.bundle === undefined ? {} : { bundle: kept.bundle }),
    outcome: kept.outcome,
    status: kept.status,
    ...(kept.code === undefined ? {} : { code: kept.code }),
    durationMs: Math.round(kept.durationMs * 100) / 100,
    queueMs: Math.round(kept.queueMs * 100) / 100,
    executed: kept.executed,
    dryRun: kept.dryRun,
    replayed: kept.outcome === 'replayed',
    ...(kept.traceId === undefined ? {} : { traceId: kept.traceId }),
    ...(kept.approvalId === undefined ? {} : { approvalId: kept.approvalId }),
    ...(kept.limit === undefined ? {} : { limit: kept.limit }),
  }
}
