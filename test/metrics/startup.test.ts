import { describe, expect, it } from 'vitest'
import { OUTCOMES } from '../../src/index.js'
import { AUTH_FAILURE_REASONS, DURATION_BUCKETS } from '../../src/services/metrics/gateway-metrics.js'
import { VERSION } from '../../src/services/version.js'
import { httpTools } from '../fixtures/http-tools.js'
import { payTool } from '../fixtures/metrics-tools.js'
import { testApp } from '../http/helpers.js'
import { sample, scrape } from './scrape.js'

const tools = [...httpTools, payTool]

describe('series that exist from start-up, before any call', () => {
  it('every tool has its call counters at 0 for every outcome, and its ok duration histogram at 0', async () => {
    const s = await scrape(await testApp({}, tools))
    for (const tool of tools) {
      const labels = { tool: tool.id, kind: tool.kind, effects: tool.effectsLabel }
      for (const outcome of OUTCOMES) expect(sample(s, 'toolgate_tool_calls_total', { ...labels, outcome }), `${tool.id} ${outcome}`).toBe(0)
      expect(sample(s, 'toolgate_tool_duration_seconds_count', { ...labels, outcome: 'ok' })).toBe(0)
      expect(sample(s, 'toolgate_tool_duration_seconds_sum', { ...labels, outcome: 'ok' })).toBe(0)
      for (const le of [...DURATION_BUCKETS.map(String), '+Inf']) {
        expect(sample(s, 'toolgate_tool_duration_seconds_bucket', { ...labels, outcome: 'ok', le }), `${tool.id} le=${le}`).toBe(0)
      }
    }
  })

  it('every tool has its in-flight gauge, queue wait histogram and idempotent replay counter at 0', async () => {
    const s = await scrape(await testApp({}, tools))
    for (const tool of tools) {
      const labels = { tool: tool.id, kind: tool.kind, effects: tool.effectsLabel }
      expect(sample(s, 'toolgate_tool_calls_in_flight', labels), tool.id).toBe(0)
      expect(sample(s, 'toolgate_tool_queue_wait_seconds_count', labels), tool.id).toBe(0)
      expect(sample(s, 'toolgate_tool_queue_wait_seconds_bucket', { ...labels, le: '+Inf' }), tool.id).toBe(0)
      expect(sample(s, 'toolgate_idempotent_replays_total', labels), tool.id).toBe(0)
    }
  })

  it('the effects label is "none" without effects, else the declared effects sorted and comma-joined', async () => {
    const s = await scrape(await testApp({}, tools))
    expect(sample(s, 'toolgate_tool_calls_total', { tool: 'echo', kind: 'read', effects: 'none', outcome: 'ok' })).toBe(0)
    expect(sample(s, 'toolgate_tool_calls_total', { tool: 'slow_write', kind: 'write', effects: 'irreversible', outcome: 'ok' })).toBe(0)
    // Declared as ['irreversible', 'financial', 'affects-others'].
    expect(sample(s, 'toolgate_tool_calls_total', { tool: 'pay', kind: 'write', effects: 'affects-others,financial,irreversible', outcome: 'ok' })).toBe(0)
  })

  it('authentication failures exist at 0 for every reason of the closed set; queue length and build info are served', async () => {
    const s = await scrape(await testApp({}, tools))
    expect(AUTH_FAILURE_REASONS).toEqual(['missing', 'invalid_key', 'invalid_token', 'expired', 'malformed', 'other'])
    for (const reason of AUTH_FAILURE_REASONS) expect(sample(s, 'toolgate_auth_failures_total', { reason }), reason).toBe(0)
    expect(sample(s, 'toolgate_queue_length')).toBe(0)
    expect(sample(s, 'toolgate_build_info', { version: VERSION })).toBe(1)
  })

  it('process and runtime metrics are served under their standard names', async () => {
    const s = await scrape(await testApp({}, tools))
    for (const name of ['process_cpu_seconds_total', 'process_resident_memory_bytes', 'process_start_time_seconds', 'nodejs_heap_size_used_bytes', 'nodejs_eventloop_lag_seconds']) {
      expect(sample(s, name), name).toBeGreaterThanOrEqual(0)
    }
    expect(s.text).toMatch(/^nodejs_version_info\{.*\} 1$/m)
  })

  it('only counters end in _total (promtool refuses prom-client\'s nodejs_active_*_total gauges)', async () => {
    const { text } = await scrape(await testApp({}, tools))
    const types = [...text.matchAll(/^# TYPE (\S+) (\S+)$/gm)].map(m => ({ name: m[1]!, type: m[2]! }))
    expect(types.length).toBeGreaterThan(20)
    for (const { name, type } of types) expect(name.endsWith('_total'), `${name} is a ${type}`).toBe(type === 'counter')
  })

  it('with METRICS=false there is no /metrics route', async () => {
    const app = await testApp({ metrics: false }, tools)
    expect((await app.inject({ method: 'GET', url: '/metrics' })).statusCode).toBe(404)
  })
})
