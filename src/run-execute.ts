import { AbortReason, type CallControl } from './abort.js'
import { GatewayError } from './errors.js'
import { currentSelfConcurrency } from './define-tool.js'
import { QueueFullError, type Lease, type Scheduler } from './scheduler.js'
import type { AnyTool, ConcurrencyClass, ToolContext } from './tool.js'

const SHARED: ConcurrencyClass = { type: 'shared' }
const EXCLUSIVE: ConcurrencyClass = { type: 'exclusive' }

/** The scheduling class of this call; `selfConcurrency` is read now, at every call. */
export function concurrencyClassOf (tool: AnyTool): ConcurrencyClass {
  if (tool.isReadOnly && tool.isConcurrencySafe) return SHARED
  const limit = currentSelfConcurrency(tool)
  return limit >= 2 ? { type: 'group', toolId: tool.id, limit } : EXCLUSIVE
}

/** Wait for a slot; a full queue is 429, a wait past `queueTimeoutMs` is 503, an abort ends the wait. */
export function acquireSlot (scheduler: Scheduler, domain: string, cls: ConcurrencyClass, control: CallControl, queueTimeoutMs: number, maxQueue?: number): Lease | Promise<Lease> {
  let now: Lease | undefined
  let later: ((lease: Lease) => void) | undefined
  let ticket
  try {
    ticket = scheduler.request(domain, cls, lease => { if (later === undefined) now = lease; else later(lease) }, maxQueue)
  } catch (error) {
    if (error instanceof QueueFullError) throw new GatewayError('TOOLGATE_QUEUE_FULL', error.message, { retryAfter: 1 })
    throw error
  }
  if (now !== undefined) return now
  const queued = ticket
  return new Promise<Lease>((resolve, reject) => {
    const timer = setTimeout(() => {
      control.onAbort(undefined)
      queued.cancel()
      reject(new GatewayError('TOOLGATE_QUEUE_TIMEOUT', `no slot in "${domain}" within ${queueTimeoutMs} ms`, { retryAfter: Math.ceil(queueTimeoutMs / 1000) }))
    }, queueTimeoutMs)
    later = lease => { clearTimeout(timer); control.onAbort(undefined); resolve(lease) }
    control.onAbort(reason => { clearTimeout(timer); queued.cancel(); reject(reason) })
  })
}

/** How `execute` ended: a value, the tool's own throw, or our abort (timeout, cancel, shutdown). */
export type Execution =
  | { readonly type: 'value', readonly value: unknown }
  | { readonly type: 'thrown', readonly thrown: unknown }
  | { readonly type: 'aborted', readonly reason: AbortReason, readonly late: Promise<Settled> }

/** How a tool really settled, possibly after its call was aborted. */
export type Settled = { readonly type: 'value', readonly value: unknown } | { readonly type: 'thrown', readonly thrown: unknown }

/**
 * Run `execute` under a hard timeout. The result settles on the first of: the tool's value,
 * the tool's throw, or the call aborting, so a tool that ignores its signal still ends on
 * time. The lease is released when the tool really settles, or `abandonGraceMs` after an
 * abort if it never does.
 */
export function runExecute<App> (
  tool: AnyTool<App>, input: unknown, ctx: ToolContext<App>, control: CallControl,
  timeoutMs: number, lease: Lease, abandonGraceMs: number,
): Promise<Execution> {
  return new Promise<Execution>(resolve => {
    const timer = timeoutMs === Infinity
      ? undefined
      : setTimeout(() => { control.abort(new AbortReason('timeout', `tool "${tool.id}" exceeded its timeout of ${timeoutMs} ms`)) }, timeoutMs)
    let done = false
    let settled: Promise<unknown> | undefined
    const finish = (execution: Execution): void => {
      if (done) return
      done = true
      clearTimeout(timer)
      control.onAbort(undefined)
      resolve(execution)
    }
    // An aborted tool keeps its slot until it settles (or the grace ends): see onAbort below.
    const release = (): void => { if (!done) lease.release() }
    try {
      settled = Promise.resolve(tool.execute(input, ctx))
    } catch (thrown) {
      settled = Promise.reject(thrown)
    }
    const running = settled
    // Registered after execute ran: an abort that happened synchronously inside it runs now.
    control.onAbort(reason => {
      const grace = setTimeout(() => { lease.release() }, abandonGraceMs)
      const late = running.then(
        (value): Settled => { clearTimeout(grace); lease.release(); return { type: 'value', value } },
        (thrown: unknown): Settled => { clearTimeout(grace); lease.release(); return { type: 'thrown', thrown } },
      )
      finish({ type: 'aborted', reason, late })
    })
    running.then(
      value => { release(); finish({ type: 'value', value }) },
      (thrown: unknown) => { release(); finish({ type: 'thrown', thrown }) },
    )
  })
}
