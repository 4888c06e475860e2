import { afterEach, describe, expect, it } from 'vitest'
import { PressureMonitor, type PressureLimits } from '../../src/services/pressure.js'

const OFF: PressureLimits = { maxEventLoopDelayMs: 0, maxHeapUsedBytes: 0, maxRssBytes: 0 }
const monitors: PressureMonitor[] = []
const monitor = (limits: Partial<PressureLimits>): PressureMonitor => {
  const created = new PressureMonitor({ ...OFF, ...limits }, 60_000)
  monitors.push(created)
  return created
}
afterEach(() => { for (const m of monitors.splice(0)) m.close() })

function blockFor (ms: number): void {
  const until = Date.now() + ms
  while (Date.now() < until) { /* a long synchronous task */ }
}

describe('PressureMonitor', () => {
  it('with no limit set it checks nothing and never reports pressure', () => {
    const m = monitor({})
    m.sample()
    expect(PressureMonitor.checks(OFF)).toBe(false)
    expect(m.current).toBeUndefined()
  })

  it('reports heap use past its limit, with the measured value', () => {
    const m = monitor({ maxHeapUsedBytes: 1 })
    expect(m.current).toBeUndefined() // nothing is known before the first sample
    m.sample()
    expect(m.current?.type).toBe('heapUsedBytes')
    expect(m.current?.value).toBeGreaterThan(1)
  })

  it('reports RSS past its limit, and clears once the limit is no longer passed', () => {
    const tight = monitor({ maxRssBytes: 1 })
    tight.sample()
    expect(tight.current?.type).toBe('rssBytes')
    const roomy = monitor({ maxRssBytes: 2 ** 50 })
    roomy.sample()
    expect(roomy.current).toBeUndefined()
  })

  it('reports a lagging event loop: event-loop turns delayed by 60 ms each', async () => {
    const m = monitor({ maxEventLoopDelayMs: 20 })
    for (let i = 0; i < 8; i++) {
      blockFor(60)
      await new Promise(resolve => setImmediate(resolve))
    }
    m.sample()
    expect(m.current?.type).toBe('eventLoopDelay')
    expect(m.current?.value).toBeGreaterThan(20)
  })

  it('an interval with no event-loop sample at all is no delay, not an infinite one', () => {
    const m = monitor({ maxEventLoopDelayMs: 20 })
    m.sample() // the histogram has had no turn of the loop since it was enabled
    expect(m.current).toBeUndefined()
  })
})
