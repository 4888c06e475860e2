import type { Charge, LimitCaller } from '../limits/limits.js'
import type { Binding, Call } from '../types.js'

/*
 * Step 7b, right before a call is scheduled: charge its limits. Here, inside the idempotency
 * claim and after an approval was consumed, only a call that will run spends: a replay, a
 * refusal at any earlier gate and a dry run never reach it. A call that then never begins
 * (queue full, shutdown, a deadline while queued) is refunded; one that began stays charged,
 * whatever its outcome, since what it did upstream cannot be known to be undone.
 */

/** Run `run` under the call's limits; synchronous when there are none, or the store is in process. */
export function limited (call: Call, approved: boolean, run: () => unknown): unknown {
  const { limits } = call.env
  // Most tools are under no limit: they pay one lookup, not the caller's key.
  if (limits.of(call.tool).length === 0) return run()
  const charging = limits.charge(call.tool, call.input, callerOf(call.binding), approved)!
  if (charging instanceof Promise) return charging.then(async charge => await runCharged(call, charge, run))
  return runCharged(call, charging, run)
}

function runCharged (call: Call, charge: Charge, run: () => unknown): unknown {
  call.handle.limits = charge.uses
  const refund = (error: unknown): never => {
    if (!call.record.executed) void call.env.limits.refund(charge)
    throw error
  }
  let running: unknown
  try {
    running = run()
  } catch (error) {
    return refund(error)
  }
  return running instanceof Promise ? running.catch(refund) : running
}

/** Whose counts the call is kept in: its requester, and its concurrency domain as its session. */
export function callerOf (binding: Pick<Binding<unknown>, 'requester' | 'idempotencyScope' | 'domain'>): LimitCaller {
  return { principal: binding.requester ?? binding.idempotencyScope, session: binding.domain }
}
