/**
 * Whether `promise` settles before a timer of `ms` milliseconds, started now, fires.
 *
 * A deadline kept by the event loop's own clock rather than by `performance.now()` after the
 * fact. The timers the code under test arms (timeouts, queue waits, shutdown grace) and this
 * one wait on the same loop, and a loop that falls behind (a busy machine, a descheduled
 * process, a garbage collection) runs the timers that are due in the order they fell due, with
 * the promise jobs each one starts run before the next. So this answers whether the code was on
 * time, and a loaded machine does not change the answer, where a wall-clock bound measures the
 * machine too. It holds for code that settles from its timer without waiting for I/O (in-process
 * work, `app.inject`); a deadline on I/O (sockets, Redis, child processes) needs a wall-clock bound.
 */
export async function settlesBefore (promise: Promise<unknown>, ms: number): Promise<boolean> {
  let timer: NodeJS.Timeout | undefined
  const late = new Promise<false>(resolve => { timer = setTimeout(() => { resolve(false) }, ms) })
  try {
    return await Promise.race([promise.then(() => true, () => true), late])
  } finally {
    clearTimeout(timer)
  }
}
