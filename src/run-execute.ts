import { AbortReason } from './abort.js'
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
export function acquireSlot (scheduler: Scheduler, domain: string, cls: ConcurrencyClass, signal: AbortSignal, queueTimeoutMs: number): Lease | Promise<Lease> {
  let now: Lease | undefined
  let later: ((lease: Lease) => void) | undefined
  let ticket
  try {
    ticket = scheduler.request(domain, cls, lease => { if (later === undefined) now = lease; else later(lease) })
  } catch (error) {
    if (error instanceof QueueFullError) throw new GatewayError('TOOLGATE_QUEUE_FULL', error.message, { retryAfter: 1 })
    throw error
  }
  if (now !== undefined) return now
  const queued = ticket
  return new Promise<Lease>((resolve, reject) => {
    const stop = (): void => { clearTimeout(timer); signal.removeEventListener('abort', onAbort) }
    const onAbort = (): void => { queued.cancel(); stop(); reject(signal.reason) }
    const timer = setTimeout(() => {
      queued.cancel(); stop()
      reject(new GatewayError('TOOLGATE_QUEUE_TIMEOUT', `no slot in concurrency domain "${domain}" within ${queueTimeoutMs} ms`, { retryAfter: Math.ceil(queueTimeoutMs / 1000) }))
    }, queueTimeoutMs)
    signal.addEventListener('abort', onAbort, { once: true })
    later = lease => { stop(); resolve(lease) }
  })
}

/** How `execute` ended: a value, the tool's own throw, or our abort (timeout, cancel, shutdown). */
export type Execution =
  | { readonly type: 'value', readonly value: unknown }
  | { readonly type: 'thrown', readonly thrown: unknown }
  | { readonly type: 'aborted', readonly reason: AbortReason }

/**
 * Run `execute` under a hard timeout. The result settles on the first of: the tool's value,
 * the tool's throw, or the signal aborting, so a tool that ignores its signal still ends on
 * time. The lease is released when the tool really settles, or `abandonGraceMs` after an
 * abort if it never does.
 */
export function runExecute<App> (
  tool: AnyTool<App>, input: unknown, ctx: ToolContext<App>, controller: AbortController,
  timeoutMs: number, lease: Lease, abandonGraceMs: number,
): Promise<Execution> {
  return new Promise<Execution>(resolve => {
    const signal = controller.signal
    if (signal.aborted) {
      lease.release()
      resolve({ type: 'aborted', reason: signal.reason as AbortReason })
      return
    }
    let timer: NodeJS.Timeout | undefined
    if (timeoutMs !== Infinity) {
      timer = setTimeout(() => { controller.abort(new AbortReason('timeout', `tool "${tool.id}" exceeded its timeout of ${timeoutMs} ms`)) }, timeoutMs)
    }
    let done = false
    const finish = (execution: Execution): void => {
      if (done) return
      done = true
      clearTimeout(timer)
      signal.removeEventListener('abort', onAbort)
      resolve(execution)
    }
    const onAbort = (): void => {
      finish({ type: 'aborted', reason: signal.reason as AbortReason })
      const grace = setTimeout(() => { lease.release() }, abandonGraceMs)
      settled.finally(() => { clearTimeout(grace); lease.release() }).catch(() => {})
    }
    let settled: Promise<unknown>
    try {
      settled = Promise.resolve(tool.execute(input, ctx))
    } catch (thrown) {
      settled = Promise.reject(thrown)
    }
    signal.addEventListener('abort', onAbort, { once: true })
    // execute may have aborted the signal synchronously (say, by aborting the caller's
    // controller); a listener added after that never fires, so the call would hang.
    if (signal.aborted) onAbort()
    settled.then(
      value => { if (!done) lease.release(); finish({ type: 'value', value }) },
      (thrown: unknown) => { if (!done) lease.release(); finish({ type: 'thrown', thrown }) },
    )
  })
}
