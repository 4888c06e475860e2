import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { ConfigError } from '../../src/services/config.js'
import { tracingFromEnv } from '../../src/services/tracing/setup.js'
import { OtlpReceiver } from './otlp-receiver.js'

/* The standard settings the gateway's tracer reads itself: the resource, the span limits and the batch processor's. */

let receiver: OtlpReceiver
beforeAll(async () => { receiver = await OtlpReceiver.start() })
afterAll(async () => { await receiver.close() })

/** One span through a tracer built from `env`, as the receiver got it. */
async function oneSpan (env: Record<string, string>, attributes: Record<string, string> = {}): Promise<OtlpReceiver['spans'][number]> {
  const tracing = (await tracingFromEnv({ OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url, OTEL_EXPORTER_OTLP_PROTOCOL: 'http/json', ...env }))!
  const name = `span ${receiver.spans.length}`
  tracing.tracer.startSpan(name, { attributes }).end()
  await tracing.shutdown()
  return receiver.named(name)[0]!
}

describe('tracing settings: the resource and the span limits', () => {
  it('puts OTEL_RESOURCE_ATTRIBUTES on the resource, percent-decoded, with OTEL_SERVICE_NAME winning', async () => {
    const span = await oneSpan({ OTEL_RESOURCE_ATTRIBUTES: 'deployment.environment=prod, team=a%2Cb,service.name=listed', OTEL_SERVICE_NAME: 'named' })
    expect(span.resource).toMatchObject({ 'deployment.environment': 'prod', team: 'a,b', 'service.name': 'named', 'telemetry.sdk.language': 'nodejs' })
  })

  it('takes service.name from OTEL_RESOURCE_ATTRIBUTES when OTEL_SERVICE_NAME is unset, keys percent-decoded too', async () => {
    const span = await oneSpan({ OTEL_RESOURCE_ATTRIBUTES: 'service.name=listed,service.version=9.9,my%2Ckey=v' })
    expect(span.resource).toMatchObject({ 'service.name': 'listed', 'service.version': '9.9', 'my,key': 'v' })
    expect((await oneSpan({})).resource).toMatchObject({ 'service.name': 'toolgate' })
  })

  it('refuses an OTEL_RESOURCE_ATTRIBUTES entry that is not key=value', async () => {
    for (const bad of ['novalue', '=x', 'k=%E0%A4%A']) {
      await expect(tracingFromEnv({ OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url, OTEL_RESOURCE_ATTRIBUTES: `ok=1,${bad}` })).rejects.toThrow(ConfigError)
    }
  })

  it('holds spans to OTEL_SPAN_ATTRIBUTE_COUNT_LIMIT and OTEL_ATTRIBUTE_VALUE_LENGTH_LIMIT', async () => {
    const span = await oneSpan({ OTEL_SPAN_ATTRIBUTE_COUNT_LIMIT: '2', OTEL_ATTRIBUTE_VALUE_LENGTH_LIMIT: '3' }, { a: 'abcdef', b: 'b', c: 'c' })
    expect(span.attributes).toEqual({ a: 'abc', b: 'b' })
  })

  it('reads the per-event attribute limit by the SDK\'s name as well as the specification\'s', async () => {
    const tracing = (await tracingFromEnv({ OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url, OTEL_EXPORTER_OTLP_PROTOCOL: 'http/json', OTEL_SPAN_ATTRIBUTE_PER_EVENT_COUNT_LIMIT: '1' }))!
    const span = tracing.tracer.startSpan('events') as unknown as { addEvent: (name: string, attributes: Record<string, string>) => void, events: Array<{ attributes: Record<string, string>, droppedAttributesCount: number }>, end: () => void }
    span.addEvent('e', { a: '1', b: '2' })
    expect(span.events[0]).toMatchObject({ attributes: { a: '1' }, droppedAttributesCount: 1 })
    span.end()
    await tracing.shutdown()
  })

  it('sends a batch once OTEL_BSP_MAX_EXPORT_BATCH_SIZE spans have ended, not at the end of OTEL_BSP_SCHEDULE_DELAY', async () => {
    const tracing = (await tracingFromEnv({ OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url, OTEL_BSP_MAX_EXPORT_BATCH_SIZE: '2', OTEL_BSP_SCHEDULE_DELAY: '600000' }))!
    tracing.tracer.startSpan('batched 1').end()
    tracing.tracer.startSpan('batched 2').end()
    const deadline = Date.now() + 5_000
    while (receiver.named('batched 2').length === 0 && Date.now() < deadline) await new Promise(resolve => setTimeout(resolve, 20))
    expect(receiver.named('batched 1')).toHaveLength(1)
    expect(receiver.named('batched 2')).toHaveLength(1)
    await tracing.shutdown()
  })

  it('refuses a batch processor setting that is not a whole number, naming it', async () => {
    for (const [name, bad] of [['OTEL_BSP_MAX_QUEUE_SIZE', '0'], ['OTEL_BSP_MAX_EXPORT_BATCH_SIZE', 'many'], ['OTEL_BSP_SCHEDULE_DELAY', '-1'], ['OTEL_BSP_EXPORT_TIMEOUT', '1.5']]) {
      await expect(tracingFromEnv({ OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url, [name!]: bad! })).rejects.toThrow(new RegExp(name!))
    }
  })

  it('refuses a limit that is not a whole number', async () => {
    await expect(tracingFromEnv({ OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url, OTEL_SPAN_EVENT_COUNT_LIMIT: 'lots' })).rejects.toThrow(/OTEL_SPAN_EVENT_COUNT_LIMIT/)
  })
})
