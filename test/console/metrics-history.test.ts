import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import { MetricsHistory, quantile } from '../../src/services/console/metrics-history.js'
import { GatewayMetrics } from '../../src/services/metrics/gateway-metrics.js'
import { httpTools } from '../fixtures/http-tools.js'
import type { CallRecord } from '../../src/index.js'

const record = (toolId: string, outcome: string, durationMs: number, effects: string[] = []): CallRecord =>
  ({ toolId, outcome, durationMs, queueMs: 0, executed: true, effects, readOnly: true, kind: 'read' }) as unknown as CallRecord

describe('the console\'s chart points', () => {
  it('keep what changed between two reads of the metrics: calls by outcome and effect, failures, latency of the busiest tools', () => {
    const metrics = new GatewayMetrics(httpTools)
    const history = new MetricsHistory(() => metrics.totals(), { intervalMs: 5000, points: 3 })
    metrics.observe(record('echo', 'ok', 5))
    history.sample(0)
    for (let i = 0; i < 8; i++) metrics.observe(record('echo', 'ok', 4))
    metrics.observe(record('slow_write', 'timeout', 2000))
    metrics.observe(record('slow_write', 'ok', 30))
    history.sample(5000)
    const [point] = history.points()
    expect(point).toMatchObject({ seconds: 5, byOutcome: { ok: 9, timeout: 1 }, byEffect: { none: 8, irreversible: 2 }, errors: 1 })
    expect(point!.tools.map(t => [t.tool, t.calls])).toEqual([['echo', 8], ['slow_write', 2]])
    expect(point!.tools[0]!.p50Ms).toBeGreaterThan(2.5)
    expect(point!.tools[0]!.p50Ms).toBeLessThanOrEqual(5)
    for (let t = 10_000; t <= 30_000; t += 5000) history.sample(t)
    expect(history.points()).toHaveLength(3)
    expect(history.points().at(-1)).toMatchObject({ byOutcome: {}, errors: 0, tools: [] })
  })

  it('find a quantile within the bounds of the bucket that holds its rank', () => {
    const bounds = [1, 2, 5, 10]
    fc.assert(fc.property(fc.array(fc.nat(50), { minLength: 5, maxLength: 5 }), fc.double({ min: 0.01, max: 1, noNaN: true }), (counts, q) => {
      const value = quantile(q, Float64Array.from(counts), bounds)
      const total = counts.reduce((a, b) => a + b, 0)
      if (total === 0) return value === undefined
      let cumulative = 0
      let bucket = 0
      while (cumulative + counts[bucket]! < q * total || counts[bucket] === 0) cumulative += counts[bucket++]!
      const lower = bucket === 0 ? 0 : bounds[bucket - 1]!
      const upper = bounds[Math.min(bucket, bounds.length - 1)]!
      return value! >= lower - 1e-9 && value! <= upper + 1e-9
    }))
  })
})
