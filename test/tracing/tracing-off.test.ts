import { propagation, trace } from '@opentelemetry/api'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { z } from 'zod'
import { defineTool, type TraceContext } from '../../src/index.js'
import { ConfigError } from '../../src/services/config.js'
import { tracingFromEnv } from '../../src/services/tracing/setup.js'
import { auth, KEYS, testApp } from '../http/helpers.js'
import { OtlpReceiver } from './otlp-receiver.js'

let receiver: OtlpReceiver
beforeAll(async () => { receiver = await OtlpReceiver.start() })
afterAll(async () => { await receiver.close() })

describe('tracing off', () => {
  it('is off unless an OTLP endpoint is set, and stays off when disabled explicitly', async () => {
    expect(await tracingFromEnv({})).toBeUndefined()
    expect(await tracingFromEnv({ OTEL_SERVICE_NAME: 'x', OTEL_EXPORTER_OTLP_ENDPOINT: '' })).toBeUndefined()
    expect(await tracingFromEnv({ OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url, OTEL_SDK_DISABLED: 'true' })).toBeUndefined()
    expect(await tracingFromEnv({ OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url, OTEL_TRACES_EXPORTER: 'none' })).toBeUndefined()
  })

  it('makes no span, installs nothing and gives tools no trace context', async () => {
    const seen: Array<TraceContext | undefined> = []
    const probe = defineTool({
      id: 'probe', kind: 'write', description: 'Records ctx.trace.', isReadOnly: false, isConcurrencySafe: false, authorize () {},
      inputSchema: z.object({}), outputSchema: z.null(),
      execute: (_input, ctx) => { seen.push(ctx.trace); return null },
    })
    const app = await testApp({}, [probe])
    const response = await app.inject({ method: 'POST', url: '/tools/probe', headers: { ...auth(KEYS.admin), traceparent: '00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01' }, payload: {} })
    expect(response.statusCode).toBe(200)
    expect(seen).toEqual([undefined])
    // No server span hooks on the app, no propagator, no context manager, no real tracer provider in the process.
    expect(app.hasRequestDecorator('serverSpan')).toBe(false)
    expect(propagation.fields()).toEqual([])
    expect(trace.getTracer('probe').startSpan('x').isRecording()).toBe(false)
    await new Promise(resolve => setTimeout(resolve, 100))
    expect(receiver.spans).toEqual([])
    expect(receiver.contentTypes).toEqual([])
  })
})

describe('tracing settings', () => {
  it('an unsupported protocol or sampler stops start-up naming the setting', async () => {
    await expect(tracingFromEnv({ OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url, OTEL_EXPORTER_OTLP_PROTOCOL: 'grpc' })).rejects.toThrow(ConfigError)
    await expect(tracingFromEnv({ OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url, OTEL_EXPORTER_OTLP_PROTOCOL: 'grpc' })).rejects.toThrow(/OTEL_EXPORTER_OTLP_PROTOCOL/)
    await expect(tracingFromEnv({ OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url, OTEL_TRACES_SAMPLER: 'sometimes' })).rejects.toThrow(/OTEL_TRACES_SAMPLER/)
    await expect(tracingFromEnv({ OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url, OTEL_TRACES_SAMPLER: 'traceidratio', OTEL_TRACES_SAMPLER_ARG: '2' })).rejects.toThrow(/OTEL_TRACES_SAMPLER_ARG/)
  })
})
