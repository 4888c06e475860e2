import fc from 'fast-check'
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest'
import { z } from 'zod'
import { defineToolCatalog } from '../../src/core/catalog.js'
import { PROGRESS_INTERVAL_MS, ProgressReporter, type ProgressUpdate } from '../../src/core/progress.js'
import { echoDeclaration } from './helpers.js'

/*
 * `ctx.progress`: what a caller is told of a call's progress. Paced, increasing, quiet once the
 * call is settled, and the latest update is never lost while the call runs.
 */

describe('ProgressReporter', () => {
  beforeEach(() => { vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout', 'performance'] }) })
  afterEach(() => { vi.useRealTimers() })

  const op = fc.oneof(
    fc.record({ type: fc.constant('report' as const), progress: fc.double({ min: -10, max: 10, noNaN: true }) }),
    fc.record({ type: fc.constant('wait' as const), ms: fc.nat({ max: 250 }) }),
    fc.record({ type: fc.constant('close' as const) }),
  )

  it('tells increasing values, at most one per interval, nothing after close, and the latest once the interval passes', () => {
    fc.assert(fc.property(fc.array(op, { maxLength: 60 }), ops => {
      vi.setSystemTime(0)
      const told: Array<{ at: number, progress: number }> = []
      const reporter = new ProgressReporter(update => { told.push({ at: performance.now(), progress: update.progress }) })
      let closed = false
      let closedAt = Infinity
      let highest = -Infinity
      for (const step of ops) {
        if (step.type === 'report') {
          reporter.report({ progress: step.progress })
          if (!closed) highest = Math.max(highest, step.progress)
        } else if (step.type === 'wait') {
          vi.advanceTimersByTime(step.ms)
        } else if (!closed) {
          reporter.close()
          closed = true
          closedAt = performance.now()
        }
      }
      if (!closed) vi.advanceTimersByTime(PROGRESS_INTERVAL_MS)
      for (let i = 1; i < told.length; i++) {
        expect(told[i]!.progress).toBeGreaterThan(told[i - 1]!.progress)
        expect(told[i]!.at - told[i - 1]!.at).toBeGreaterThanOrEqual(PROGRESS_INTERVAL_MS)
      }
      for (const { at } of told) expect(at).toBeLessThanOrEqual(closedAt)
      // Still running: the highest value reported has been told, however fast it came.
      if (!closed && highest > -Infinity) expect(told.at(-1)?.progress).toBe(highest)
      reporter.close()
    }))
  })

  it('refuses a malformed update to the tool at once, and hands on only the known fields', () => {
    const heard: ProgressUpdate[] = []
    const reporter = new ProgressReporter(update => { heard.push(update) })
    for (const bad of [{ progress: Number.NaN }, { progress: Infinity }, { progress: '1' }, { progress: 1, total: '2' }, { progress: 1, message: 3 }, null]) {
      expect(() => { reporter.report(bad as never) }).toThrow(TypeError)
    }
    reporter.report({ progress: 1, total: 2, message: 'half', secret: 'x' } as ProgressUpdate)
    expect(heard).toEqual([{ progress: 1, total: 2, message: 'half' }])
  })

  it('a listener that throws never reaches the tool', () => {
    const reporter = new ProgressReporter(() => { throw new Error('the host broke') })
    expect(() => { reporter.report({ progress: 1 }) }).not.toThrow()
  })
})

describe('ctx.progress in process', () => {
  const counter = echoDeclaration({
    id: 'counter',
    inputSchema: z.object({ n: z.number().int() }),
    outputSchema: z.object({ listened: z.boolean() }),
    execute: async ({ n }: { n: number }, ctx: { progress?: (update: ProgressUpdate) => void }) => {
      for (let i = 1; i <= n; i++) {
        ctx.progress?.({ progress: i, total: n })
        await new Promise(resolve => setTimeout(resolve, PROGRESS_INTERVAL_MS + 20))
      }
      return { listened: ctx.progress !== undefined }
    },
  })

  it('InvokeRequest.onProgress hears the tool; without it the tool has no ctx.progress', async () => {
    const invoker = defineToolCatalog([counter as never]).bind({ app: {} })
    const heard: number[] = []
    expect((await invoker.invoke({ toolId: 'counter', input: { n: 2 }, onProgress: update => { heard.push(update.progress) } })).value).toEqual({ listened: true })
    expect(heard).toEqual([1, 2])
    expect((await invoker.invoke({ toolId: 'counter', input: { n: 1 } })).value).toEqual({ listened: false })
  })

  it('refuses an onProgress that is not a function before the tool runs', async () => {
    let ran = false
    const tool = echoDeclaration({ execute: () => { ran = true; return { text: 'x' } } })
    const invoker = defineToolCatalog([tool as never]).bind({ app: {} })
    await expect(invoker.invoke({ toolId: 'echo', input: { text: 'x' }, onProgress: 'yes' as never })).rejects.toMatchObject({ status: 400, code: 'TOOLGATE_INVALID_INPUT' })
    expect(ran).toBe(false)
  })

  it('goes quiet when the call settles: a tool still reporting after its timeout tells no one', async () => {
    const heard: number[] = []
    let reported = 0
    const late = echoDeclaration({
      timeoutMs: 50,
      execute: async (_input: unknown, ctx: { progress?: (update: ProgressUpdate) => void }) => {
        await new Promise(resolve => setTimeout(resolve, 150))
        ctx.progress?.({ progress: 1 })
        reported++
        return { text: 'late' }
      },
    })
    const invoker = defineToolCatalog([late as never]).bind({ app: {} })
    await expect(invoker.invoke({ toolId: 'echo', input: { text: 'x' }, onProgress: update => { heard.push(update.progress) } })).rejects.toMatchObject({ status: 504 })
    await vi.waitFor(() => { expect(reported).toBe(1) }, { timeout: 2000 })
    expect(heard).toEqual([])
  })
})
