import { describe, expect, it } from 'vitest'
import type { CallRecord } from '../../src/core/call-record.js'
import { RecentCalls } from '../../src/services/console/recent-calls.js'

function record (toolId: string): CallRecord {
  return {
    callId: `c-${toolId}`, toolId, kind: 'read', effects: [], effectsLabel: '', readOnly: true, domain: 'd', outcome: 'ok', status: 200,
    dryRun: false, escalated: false, executed: true, startedAt: 0, queueMs: 0, executeMs: 1, durationMs: 1.234, touchedResources: [], mutatedResources: [], debugSteps: [],
  }
}

describe('the recent calls kept for the console', () => {
  it('keeps the latest `capacity` calls, read after a sequence number, oldest first, at most `max`', () => {
    const recent = new RecentCalls(3)
    for (const tool of ['a', 'b', 'c', 'd', 'e']) recent.add(record(tool), 'p')
    expect(recent.after(0, 10).map(call => [call.seq, call.tool])).toEqual([[3, 'c'], [4, 'd'], [5, 'e']])
    expect(recent.after(4, 10).map(call => call.tool)).toEqual(['e'])
    expect(recent.after(5, 10)).toEqual([])
    expect(recent.after(0, 2).map(call => call.tool)).toEqual(['d', 'e'])
    expect(recent.after(0, 1)[0]).toMatchObject({ principal: 'p', transport: 'rest', durationMs: 1.23, replayed: false })
  })

  it('wakes a waiting reader at the next call, and lets one go at its deadline or when it leaves', async () => {
    const recent = new RecentCalls(3)
    const waited = recent.waitAfter(0, 10_000)
    recent.add(record('a'), 'p')
    await waited
    expect(recent.after(0, 10)).toHaveLength(1)
    const started = Date.now()
    await recent.waitAfter(1, 50)
    expect(Date.now() - started).toBeGreaterThanOrEqual(40)
    const gone = new AbortController()
    const leaving = recent.waitAfter(1, 10_000, gone.signal)
    gone.abort()
    await leaving
  })
})
