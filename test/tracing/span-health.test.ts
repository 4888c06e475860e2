import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest'
import { diag } from '@opentelemetry/api'
import { buildApp } from '../../plugins/app.js'
import { loadConfig } from '../../src/services/config.js'
import { tracingFromEnv } from '../../src/services/tracing/setup.js'
import { httpTools } from '../fixtures/http-tools.js'
import { API_KEYS, auth, KEYS } from '../http/helpers.js'
import { OtlpReceiver } from './otlp-receiver.js'

/*
 * What an operator sees of the spans themselves: `toolgate_trace_spans_total{outcome}` on
 * /metrics, and OpenTelemetry's own warnings in the gateway's log, once and not per batch.
 */

let receiver: OtlpReceiver
beforeAll(async () => { receiver = await OtlpReceiver.start() })
afterAll(async () => { await receiver.close() })
afterEach(() => { diag.disable() })

/** A traced gateway's /metrics after one call of echo and a flush (`flushed`: whether the flush succeeded). */
async function afterOneCall (env: Record<string, string>): Promise<{ metrics: string, flushed: boolean }> {
  const tracing = (await tracingFromEnv({ OTEL_TRACES_SAMPLER: 'always_on', ...env }))!
  const lines: string[] = []
  tracing.logTo?.({ warn: message => { lines.push(`warn ${message}`) }, error: message => { lines.push(`error ${message}`) } })
  const app = await buildApp({ config: loadConfig({}, { apiKeys: API_KEYS, logLevel: 'warn' }), tools: httpTools, tracing })
  try {
    const response = await app.inject({ method: 'POST', url: '/tools/echo', headers: auth(KEYS.admin), payload: { text: 'hi' } })
    expect(response.statusCode).toBe(200)
    const flushed = await tracing.forceFlush().then(() => true, () => false)
    const metrics = (await app.inject({ method: 'GET', url: '/metrics', headers: auth(KEYS.admin) })).body
    return { metrics: `${metrics}\n${lines.join('\n')}`, flushed }
  } finally {
    await app.close()
  }
}

const count = (metrics: string, outcome: string): number => Number(new RegExp(`^toolgate_trace_spans_total\\{outcome="${outcome}"\\} (\\d+)$`, 'm').exec(metrics)?.[1])

describe('the spans\' own health', () => {
  it('counts the spans exported on /metrics', async () => {
    const { metrics, flushed } = await afterOneCall({ OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url })
    expect(flushed).toBe(true)
    // The request's server span and the call's span.
    expect([count(metrics, 'exported'), count(metrics, 'dropped'), count(metrics, 'failed')]).toEqual([2, 0, 0])
    expect(metrics).toContain('# TYPE toolgate_trace_spans_total counter')
  })

  it('counts the spans an unreachable collector lost, and says so in the log once', async () => {
    // Port 9 (discard) on loopback: nothing listens there; the export gives up after 500 ms.
    const { metrics, flushed } = await afterOneCall({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://127.0.0.1:9', OTEL_BSP_EXPORT_TIMEOUT: '500', OTEL_EXPORTER_OTLP_TIMEOUT: '300' })
    expect(flushed).toBe(false)
    expect([count(metrics, 'exported'), count(metrics, 'failed')]).toEqual([0, 2])
    expect(metrics.split('\n').filter(line => line.startsWith('error opentelemetry: span export failed'))).toHaveLength(1)
  })
})
