import { AbortReason, type CallControl } from '../abort.js'
import { cancelDeadline, startDeadline } from '../deadlines.js'
import { GatewayError } from '../errors.js'
import { isThenable } from '../thenable.js'
import { currentSelfConcurrency } from '../define-tool.js'
import { QueueFullError, type Lease, type SlotScheduler, type Ticket } from '../scheduler.js'
import type { AnyTool, ConcurrencyClass, ToolContext } from '../tool.js'

const SHARED: ConcurrencyClass = { type: 'shared' }
const EXCLUSIVE: ConcurrencyClass = { type: 'exclusive' }

/** The scheduling class of this call; `selfConcurrency` is read now, at every call. */
export function concurrencyClassOf (tool: AnyTool): ConcurrencyClass {
  if (tool.isReadOnly && tool.isConcurrencySafe) return SHARED
  const limit = currentSelfConcurrency(tool)
  return limit >= 2 ? { type: 'group', toolId: tool.id, limit } : EXCLUSIVE
}

/**
 * A slot now when one is free (no promise, no timer), else wait for it: a full queue is 429, a
 * wait past `queueTimeoutMs` is 503, an abort ends the wait.
 */
export function acquireSlot (scheduler: SlotScheduler, domain: string, cls: ConcurrencyClass, control: CallControl, queueTimeoutMs: number, maxQueue?: number, enterQueue?: () => () => void): Lease | Promise<Lease> {
  const now = scheduler.tryStart(domain, cls)
  if (now !== undefined) return now
  // Only a call that must wait takes a share of the queue (see QueueShares); it throws past it.
  let leave: () => void
  try {
    leave = enterQueue?.() ?? noop
  } catch (error) {
    return Promise.reject(error)
  }
  return new Promise<Lease>((resolve, reject) => {
    let ticket: Ticket
    const timer = setTimeout(() => {
      leave()
      control.onAbort(undefined)
      ticket.cancel()
      reject(new GatewayError('TOOLGATE_QUEUE_TIMEOUT', `no slot in "${domain}" within ${queueTimeoutMs} ms`, { retryAfter: Math.ceil(queueTimeoutMs / 1000) }))
    }, queueTimeoutMs)
    const refuse = (error: unknown): void => {
      leave()
      clearTimeout(timer)
      control.onAbort(undefined)
      reject(error instanceof QueueFullError ? new GatewayError('TOOLGATE_QUEUE_FULL', error.message, { retryAfter: 1 }) : error)
    }
    try {
      ticket = scheduler.request(domain, cls, lease => { leave(); clearTimeout(timer); control.onAbort(undefined); resolve(lease) }, maxQueue, refuse)
    } catch (error) {
      refuse(error)
      return
    }
    control.onAbort(reason => { leave(); clearTimeout(timer); ticket.cancel(); reject(reason) })
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
 * Run `execute` under a hard timeout. A tool that returns a plain value (or throws) has
 * settled before any timer could fire, so it gets none: no promise, no timer, the lease
 * released at once. A promise settles the result on the first of: the tool's value, the
 * tool's throw, or the call aborting, so a tool that ignores its signal still ends on time.
 * The lease is released when the tool really settles, or `abandonGraceMs` after an abort if
 * it never does.
 */
export function runExecute<App> (
  tool: AnyTool<App>, input: unknown, ctx: ToolContext<App>, control: CallControl,
  timeoutMs: number, lease: Lease, abandonGraceMs: number,
): Execution | Promise<Execution> {
  let returned: unknown
  try {
    returned = tool.execute(input, ctx)
  } catch (thrown) {
    return settledNow(control, lease, { type: 'thrown', thrown })
  }
  if (!isThenable(returned)) return settledNow(control, lease, { type: 'value', value: returned })
  return raceAbort(tool, Promise.resolve(returned), control, timeoutMs, lease, abandonGraceMs)
}

/** A synchronous settlement; an abort that happened inside `execute` still wins, as it would have. */
function settledNow (control: CallControl, lease: Lease, settled: Settled): Execution {
  lease.release()
  if (control.reason === undefined) return settled
  return { type: 'aborted', reason: control.reason, late: Promise.resolve(settled) }
}

function raceAbort<App> (
  tool: AnyTool<App>, running: Promise<unknown>, control: CallControl,
  timeoutMs: number, lease: Lease, abandonGraceMs: number,
): Promise<Execution> {
  return new Promise<Execution>(resolve => {
    const deadline = timeoutMs === Infinity
      ? undefined
      : startDeadline(timeoutMs, () => { control.abort(new AbortReason('timeout', `tool "${tool.id}" exceeded its timeout of ${timeoutMs} ms`)) })
    let done = false
    const finish = (execution: Execution): void => {
      if (done) return
      done = true
      cancelDeadline(deadline)
      control.onAbort(undefined)
      resolve(execution)
    }
    // An aborted tool keeps its slot until it settles (or the grace ends): see onAbort below.
    const release = (): void => { if (!done) lease.release() }
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

const noop = (): void => {}
