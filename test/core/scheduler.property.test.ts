import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import { SLOW } from '../slow.js'
import { commandsArb, drain, maxQueueArb, modelCanStart, simulate, type Command } from './scheduler-model.js'

const RUNS = { numRuns: 400 }

/** Check `property` over random command sequences and queue bounds. */
function forAllTraces (property: (trace: ReturnType<typeof simulate>, commands: Command[], maxQueue: number) => void): void {
  fc.assert(fc.property(commandsArb, maxQueueArb, (commands, maxQueue) => { property(simulate(commands, maxQueue), commands, maxQueue) }), RUNS)
}

// 400 runs of the model per property: seconds each on a loaded 2-core machine.
describe('scheduler properties over random arrivals, completions and cancels', { timeout: SLOW.CPU_MS }, () => {
  it('never lets an exclusive call overlap anything in its domain', () => {
    forAllTraces(trace => {
      for (const { running } of trace.snapshots) {
        if (running.some(call => call.cls.type === 'exclusive')) expect(running).toHaveLength(1)
      }
      for (const { call, runningWith } of trace.grants) {
        if (call.cls.type === 'exclusive') expect(runningWith).toEqual([])
      }
    })
  })

  it('lets shared calls overlap: a shared arrival starts at once when only shared calls run and none wait', () => {
    forAllTraces(trace => {
      for (const { call, waitingBefore, runningBefore, grantedAtOnce } of trace.arrivals) {
        if (call.cls.type === 'shared' && waitingBefore === 0 && runningBefore.every(other => other.cls.type === 'shared')) {
          expect(grantedAtOnce).toBe(true)
        }
      }
    })
  })

  it('never runs more of a group than its limit, nor anything beside a group', () => {
    forAllTraces(trace => {
      for (const { running } of trace.snapshots) {
        const group = running.find(call => call.cls.type === 'group')
        if (group === undefined || group.cls.type !== 'group') continue
        const { toolId, limit } = group.cls
        expect(running.every(call => call.cls.type === 'group' && call.cls.toolId === toolId)).toBe(true)
        expect(running.length).toBeLessThanOrEqual(limit)
      }
    })
  })

  it('starts exclusive calls in arrival order within a domain', () => {
    forAllTraces(trace => {
      for (const domain of ['d0', 'd1']) {
        const order = trace.grants.filter(g => g.call.domain === domain && g.call.cls.type === 'exclusive').map(g => g.call.seq)
        expect(order).toEqual([...order].sort((a, b) => a - b))
      }
    })
  })

  it('grants every call in arrival order within its domain: nothing overtakes a waiting call', () => {
    forAllTraces(trace => {
      for (const { earlierWaiting } of trace.grants) expect(earlierWaiting).toEqual([])
    })
  })

  it('keeps nothing waiting without cause: the head of a queue is always blocked by its own domain', () => {
    forAllTraces(trace => {
      for (const { running, waiting } of trace.snapshots) {
        if (waiting.length > 0) expect(modelCanStart(waiting[0]!.cls, running)).toBe(false)
      }
    })
  })

  it('starts an arrival at once exactly when nothing waits and what runs allows it', () => {
    forAllTraces(trace => {
      for (const { call, waitingBefore, runningBefore, grantedAtOnce } of trace.arrivals) {
        expect(grantedAtOnce).toBe(waitingBefore === 0 && modelCanStart(call.cls, runningBefore))
      }
    })
  })

  it('never lets one domain block another: a domain behaves the same with or without the other', () => {
    fc.assert(fc.property(commandsArb, maxQueueArb, (commands, maxQueue) => {
      const together = simulate(commands, maxQueue)
      const alone = simulate(commands.filter(command => command.domain === 0), maxQueue)
      const story = (trace: typeof together) => trace.calls.filter(call => call.domain === 'd0').map(call => call.state)
      const grantOrder = (trace: typeof together) => trace.grants.filter(g => g.call.domain === 'd0').map(g => trace.calls.filter(c => c.domain === 'd0').indexOf(g.call))
      expect(story(together)).toEqual(story(alone))
      expect(grantOrder(together)).toEqual(grantOrder(alone))
    }), RUNS)
  })

  it('holds the queue bound and refuses exactly the arrivals that find it full', () => {
    forAllTraces((trace, _commands, maxQueue) => {
      for (const { waiting, queueLength } of trace.snapshots) {
        expect(queueLength).toBe(waiting.length)
        expect(queueLength).toBeLessThanOrEqual(maxQueue)
      }
      for (const { call, waitingBefore, runningBefore } of trace.arrivals) {
        const mustWait = waitingBefore > 0 || !modelCanStart(call.cls, runningBefore)
        expect(call.state === 'rejected').toBe(mustWait && waitingBefore >= maxQueue)
      }
    })
  })

  it('forgets every domain once all calls have finished', () => {
    forAllTraces(trace => {
      drain(trace)
      expect(trace.calls.filter(call => call.state === 'waiting')).toEqual([])
      expect(trace.scheduler.domainCount).toBe(0)
    })
  })

  it('forgets every domain once queued calls are cancelled and running ones finish', () => {
    forAllTraces(trace => {
      // A cancel can start the next waiter, so each call's state is read afresh.
      for (const call of trace.calls) {
        if (call.state === 'waiting') { call.state = 'cancelled'; call.ticket!.cancel() }
      }
      drain(trace)
      expect(trace.scheduler.domainCount).toBe(0)
    })
  })
})
