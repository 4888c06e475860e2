import { describe, expect, it } from 'vitest'
import { PooledIdGenerator } from '../../src/services/tracing/id-generator.js'

describe('trace and span ids', () => {
  it('are W3C-shaped lowercase hex, distinct across pool refills', () => {
    const ids = new PooledIdGenerator()
    const traces = Array.from({ length: 1_000 }, () => ids.generateTraceId())
    const spans = Array.from({ length: 1_000 }, () => ids.generateSpanId())
    expect(traces.every(id => /^[0-9a-f]{32}$/.test(id) && id !== '0'.repeat(32))).toBe(true)
    expect(spans.every(id => /^[0-9a-f]{16}$/.test(id) && id !== '0'.repeat(16))).toBe(true)
    expect(new Set(traces).size).toBe(traces.length)
    expect(new Set(spans).size).toBe(spans.length)
  })
})
