import { describe, expect, it } from 'vitest'
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
})
