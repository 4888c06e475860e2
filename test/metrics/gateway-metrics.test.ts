import { describe, expect, it } from 'vitest'
import { z } from 'zod'
import { defineTool, type CallRecord, type Outcome } from '../../src/index.js'
import { GatewayMetrics } from '../../src/services/metrics/gateway-metrics.js'

const tool = defineTool({
  id: 'pay', kind: 'write', description: 'Pays.', isReadOnly: false, isConcurrencySafe: false,
  effects: ['financial', 'irreversible'], authorize () {},
  inputSchema: z.object({}), outputSchema: z.null(), execute: () => null,
})
const LABELS = 'tool="pay",kind="write",effects="financial,irreversible"'

function record (toolId: string, outcome: Outcome, fields: Partial<CallRecord> = {}): CallRecord {
  return {
    callId: 'c', toolId, kind: 'write', effects: [], effectsLabel: 'none', readOnly: false, domain: 'd', outcome, status: 200,
    dryRun: false, escalated: false, executed: false, startedAt: 0, queueMs: 0, executeMs: 0, durationMs: 5,
    touchedResources: [], mutatedResources: [], debugSteps: [], ...fields,
  }
}

async function text (metrics: GatewayMetrics): Promise<string> {
  return metrics.render()
}

describe('GatewayMetrics without HTTP', () => {
  it('a replayed call counts as a call with outcome replayed and as an idempotent replay', async () => {
    const metrics = new GatewayMetrics([tool])
    metrics.observe(record('pay', 'replayed'))
    const body = await text(metrics)
    expect(body).toContain(`toolgate_tool_calls_total{${LABELS},outcome="replayed"} 1`)
    expect(body).toContain(`toolgate_idempotent_replays_total{${LABELS}} 1`)
  })

  it('queue wait is observed only for calls that got a slot', async () => {
    const metrics = new GatewayMetrics([tool])
    metrics.observe(record('pay', 'forbidden'))
    metrics.observe(record('pay', 'ok', { executed: true, queueMs: 250 }))
    const body = await text(metrics)
    expect(body).toContain(`toolgate_tool_queue_wait_seconds_count{${LABELS}} 1`)
    expect(body).toContain(`toolgate_tool_queue_wait_seconds_sum{${LABELS}} 0.25`)
  })

  it('records of unknown tools and unknown outcomes add no series', async () => {
    const metrics = new GatewayMetrics([tool])
    // The process's own metrics move by themselves; the gateway's must not.
    const gateway = async (): Promise<string[]> => (await text(metrics)).split('\n').filter(line => line.includes('toolgate_'))
    const before = await gateway()
    metrics.observe(record('not_a_tool', 'ok'))
    metrics.observeOutcome('pay', 'made_up' as Outcome, 1)
    metrics.inFlight('not_a_tool').inc()
    expect(await gateway()).toEqual(before)
  })

  it('an authentication failure reason outside the closed set counts as other', async () => {
    const metrics = new GatewayMetrics([])
    metrics.authFailure('expired')
    metrics.authFailure('invalid')
    metrics.authFailure('a reason nobody planned')
    const body = await text(metrics)
    expect(body).toContain('toolgate_auth_failures_total{reason="expired"} 1')
    expect(body).toContain('toolgate_auth_failures_total{reason="other"} 2')
    expect(body).not.toContain('nobody planned')
  })

  it('the queue length is read from its source at every scrape', async () => {
    let queued = 3
    const metrics = new GatewayMetrics([], { queued: () => queued })
    expect(await text(metrics)).toMatch(/^toolgate_queue_length 3$/m)
    queued = 0
    expect(await text(metrics)).toMatch(/^toolgate_queue_length 0$/m)
  })
})
