import fc from 'fast-check'
import { QueueFullError, Scheduler, type Lease, type Ticket } from '../../src/core/scheduler.js'
import type { ConcurrencyClass } from '../../src/core/tool.js'

/**
 * Drives the scheduler's synchronous request/release/cancel API through a random sequence of
 * commands and records what happened, so each property test can check one promise of
 * the concurrency rules (docs/declaration.md#concurrency) against the same trace.
 */

export const SHARED: ConcurrencyClass = { type: 'shared' }
export const EXCLUSIVE: ConcurrencyClass = { type: 'exclusive' }
export const GROUP_A: ConcurrencyClass = { type: 'group', toolId: 'group_a', limit: 2 }
const GROUP_B: ConcurrencyClass = { type: 'group', toolId: 'group_b', limit: 3 }
const DOMAINS = ['d0', 'd1'] as const

export type Command =
  | { readonly type: 'arrive', readonly domain: number, readonly cls: ConcurrencyClass }
  /** Release the `pick`-th running call of the domain. */
  | { readonly type: 'complete', readonly domain: number, readonly pick: number }
  /** Cancel the `pick`-th waiting call of the domain. */
  | { readonly type: 'cancel', readonly domain: number, readonly pick: number }
  /** Cancel the ticket of the `pick`-th call already granted: must change nothing. */
  | { readonly type: 'late-cancel', readonly domain: number, readonly pick: number }

export interface Call {
  readonly seq: number
  readonly domain: string
  readonly cls: ConcurrencyClass
  state: 'new' | 'waiting' | 'running' | 'done' | 'cancelled' | 'rejected'
  lease?: Lease
  ticket?: Ticket
}

interface Grant { readonly call: Call, readonly runningWith: Call[], readonly earlierWaiting: Call[] }
interface Arrival { readonly call: Call, readonly waitingBefore: number, readonly runningBefore: Call[], readonly grantedAtOnce: boolean }
interface Snapshot { readonly domain: string, readonly running: Call[], readonly waiting: Call[], readonly queueLength: number }

export interface Trace {
  readonly grants: Grant[]
  readonly arrivals: Arrival[]
  /** One per domain after every command. */
  readonly snapshots: Snapshot[]
  readonly scheduler: Scheduler
  readonly calls: Call[]
}

const commandArb: fc.Arbitrary<Command> = fc.oneof(
  { weight: 4, arbitrary: fc.record({ type: fc.constant('arrive' as const), domain: fc.nat(1), cls: fc.constantFrom(SHARED, EXCLUSIVE, GROUP_A, GROUP_B) }) },
  { weight: 3, arbitrary: fc.record({ type: fc.constant('complete' as const), domain: fc.nat(1), pick: fc.nat() }) },
  { weight: 1, arbitrary: fc.record({ type: fc.constant('cancel' as const), domain: fc.nat(1), pick: fc.nat() }) },
  { weight: 1, arbitrary: fc.record({ type: fc.constant('late-cancel' as const), domain: fc.nat(1), pick: fc.nat() }) },
)
// size 'max': fast-check's default keeps arrays short, too short to build real queues.
export const commandsArb = fc.array(commandArb, { maxLength: 120, size: 'max' })
export const maxQueueArb = fc.integer({ min: 0, max: 6 })

/** The reference concurrency rule (docs/declaration.md#concurrency): may `cls` start beside `running`? */
export function modelCanStart (cls: ConcurrencyClass, running: readonly Call[]): boolean {
  if (running.some(call => call.cls.type === 'exclusive')) return false
  switch (cls.type) {
    case 'shared': return running.every(call => call.cls.type === 'shared')
    case 'exclusive': return running.length === 0
    case 'group': return running.every(call => call.cls.type === 'group' && call.cls.toolId === cls.toolId) && running.length < cls.limit
  }
}

export function simulate (commands: readonly Command[], maxQueuePerDomain: number): Trace {
  const scheduler = new Scheduler({ maxQueuePerDomain })
  const calls: Call[] = []
  const trace: Trace = { grants: [], arrivals: [], snapshots: [], scheduler, calls }
  const inDomain = (domain: string, state: Call['state']): Call[] => calls.filter(c => c.domain === domain && c.state === state)

  const grant = (call: Call, lease: Lease): void => {
    const runningWith = inDomain(call.domain, 'running')
    const earlierWaiting = inDomain(call.domain, 'waiting').filter(other => other.seq < call.seq)
    call.state = 'running'
    call.lease = lease
    trace.grants.push({ call, runningWith, earlierWaiting })
  }

  for (const command of commands) {
    const domain = DOMAINS[command.domain]!
    if (command.type === 'arrive') {
      const call: Call = { seq: calls.length, domain, cls: command.cls, state: 'new' }
      const before = { waitingBefore: inDomain(domain, 'waiting').length, runningBefore: inDomain(domain, 'running') }
      calls.push(call)
      try {
        call.ticket = scheduler.request(domain, command.cls, lease => { grant(call, lease) })
        if (call.state === 'new') call.state = 'waiting'
      } catch (error) {
        if (!(error instanceof QueueFullError)) throw error
        call.state = 'rejected'
      }
      trace.arrivals.push({ call, ...before, grantedAtOnce: call.state === 'running' })
    } else if (command.type === 'complete') {
      const running = inDomain(domain, 'running')
      const call = running[command.pick % Math.max(running.length, 1)]
      if (call !== undefined) { call.state = 'done'; call.lease!.release() }
    } else {
      const states: ReadonlyArray<Call['state']> = command.type === 'cancel' ? ['waiting'] : ['running', 'done']
      const candidates = calls.filter(c => c.domain === domain && states.includes(c.state))
      const call = candidates[command.pick % Math.max(candidates.length, 1)]
      if (call !== undefined) {
        if (call.state === 'waiting') call.state = 'cancelled'
        call.ticket!.cancel()
      }
    }
    for (const d of DOMAINS) {
      trace.snapshots.push({ domain: d, running: inDomain(d, 'running'), waiting: inDomain(d, 'waiting'), queueLength: scheduler.queueLength(d) })
    }
  }
  return trace
}

/** Finish everything: release running calls until nothing runs or waits. */
export function drain (trace: Trace): void {
  for (;;) {
    const running = trace.calls.find(call => call.state === 'running')
    if (running === undefined) return
    running.state = 'done'
    running.lease!.release()
  }
}
