import { describe, expect, it } from 'vitest'
import fc from 'fast-check'
import { Cancellations } from '../../src/services/mcp/cancellations.js'

describe('calls in flight for notifications/cancelled', () => {
  it('a notification aborts the call of its scope and id, and nothing else', () => {
    const calls = new Cancellations()
    const mine = calls.open('alice', 1)
    const text = calls.open('alice', '1')
    const theirs = calls.open('bob', 1)
    let fired = 0
    mine.addEventListener('abort', () => { fired++ })
    expect(calls.cancel('alice', { requestId: 1 })).toBe(true)
    expect([mine.aborted, text.aborted, theirs.aborted]).toEqual([true, false, false])
    expect(fired).toBe(1)
    expect(calls.cancel('carol', { requestId: 1 })).toBe(false)
    expect(calls.cancel('alice', { requestId: 2 })).toBe(false)
    expect(calls.cancel('alice', { requestId: { not: 'an id' } })).toBe(false)
  })

  it('an id two calls of one scope share cancels neither; once one settles it names the other', () => {
    const calls = new Cancellations()
    const first = calls.open('alice', 7)
    const second = calls.open('alice', 7)
    expect(calls.cancel('alice', { requestId: 7 })).toBe(false)
    expect([first.aborted, second.aborted]).toEqual([false, false])
    calls.close(first)
    expect(calls.cancel('alice', { requestId: 7 })).toBe(true)
    expect(second.aborted).toBe(true)
  })

  it('keeps nothing of calls that settled, nor of their scopes, however many came and went', () => {
    const calls = new Cancellations()
    const open = Array.from({ length: 100 }, (_, i) => calls.open(`caller-${i}`, i % 3))
    expect([calls.size, calls.scopes]).toEqual([100, 100])
    for (const signal of open) calls.close(signal)
    calls.close(open[0]!) // twice: nothing happens
    expect([calls.size, calls.scopes]).toEqual([0, 0])
    expect(calls.cancel('caller-0', { requestId: 0 })).toBe(false)
  })

  it('counts every call of a shared id, and cancels only where exactly one of a scope and id is in flight, for any opens and closes', () => {
    const step = fc.oneof(
      fc.record({ open: fc.constantFrom('alice', 'bob'), id: fc.constantFrom<number | string>(1, 2, '1') }),
      fc.record({ close: fc.nat(40) }),
      fc.record({ cancel: fc.constantFrom('alice', 'bob'), id: fc.constantFrom<number | string>(1, 2, '1') }),
    )
    fc.assert(fc.property(fc.array(step, { maxLength: 60 }), steps => {
      const calls = new Cancellations()
      const open: Array<{ scope: string, id: number | string, signal: ReturnType<Cancellations['open']> }> = []
      for (const s of steps) {
        if ('open' in s) {
          open.push({ scope: s.open, id: s.id, signal: calls.open(s.open, s.id) })
        } else if ('close' in s) {
          if (open.length === 0) continue
          const [closed] = open.splice(s.close % open.length, 1)
          calls.close(closed!.signal)
        } else {
          const matching = open.filter(call => call.scope === s.cancel && call.id === s.id)
          const wasAborted = matching.map(call => call.signal.aborted)
          expect(calls.cancel(s.cancel, { requestId: s.id })).toBe(matching.length === 1)
          matching.forEach((call, i) => { expect(call.signal.aborted).toBe(wasAborted[i] === true || matching.length === 1) })
        }
        expect(calls.size).toBe(open.length)
        expect(calls.scopes).toBe(new Set(open.map(call => call.scope)).size)
      }
    }), { numRuns: 300 })
  })
})
