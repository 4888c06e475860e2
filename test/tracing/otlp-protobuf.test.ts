import { describe, expect, it } from 'vitest'
import fc from 'fast-check'
import { SpanKind, SpanStatusCode, type HrTime, type Link, type SpanContext } from '@opentelemetry/api'
import { ProtobufTraceSerializer } from '@opentelemetry/otlp-transformer'
import { resourceFromAttributes } from '@opentelemetry/resources'
import { BasicTracerProvider, InMemorySpanExporter, SimpleSpanProcessor, type ReadableSpan, type TimedEvent } from '@opentelemetry/sdk-trace-node'
import { TraceState } from '@opentelemetry/core'
import { writeSpanField } from '../../src/services/tracing/otlp-protobuf.js'
import { Encoder } from '../../src/services/tracing/protobuf-writer.js'
import { SpanEnvelope } from '../../src/services/tracing/span-batches.js'
import { serializeSpans } from './serialize-spans.js'

/*
 * toolgate's protobuf serializer against the SDK's own, byte for byte: the SDK's is what a
 * collector has always been sent, so any difference is a bug here (field order included).
 */

const same = (spans: readonly ReadableSpan[]): void => {
  expect(Buffer.from(serializeSpans(spans)).toString('hex')).toBe(Buffer.from(ProtobufTraceSerializer.serializeRequest([...spans])!).toString('hex'))
}

const hex = (bytes: number): fc.Arbitrary<string> => fc.uint8Array({ minLength: bytes, maxLength: bytes }).map(b => Buffer.from(b).toString('hex'))
/** Short and long, ASCII and not (lone surrogates included: both sides write U+FFFD). */
const text = fc.oneof(fc.string({ maxLength: 12 }), fc.string({ unit: 'binary', maxLength: 40 }), fc.string({ minLength: 120, maxLength: 400 }), fc.constantFrom('\ud800', 'é', '', 'gen_ai.tool.name'))
const number = fc.oneof(fc.integer(), fc.double(), fc.constantFrom(0, -0, -1, 2 ** 32, 2 ** 53, 2 ** 60, -(2 ** 63), 2 ** 63, Number.NaN, Infinity, 0.1))
const scalar = fc.oneof(text, fc.boolean(), number, fc.uint8Array({ maxLength: 20 }), fc.constantFrom(undefined, null))
const value = fc.letrec(tie => ({
  any: fc.oneof({ depthSize: 'small' }, scalar, fc.array(tie('any'), { maxLength: 4 }), fc.dictionary(text, tie('any'), { maxKeys: 3 })),
})).any
/** Wider than the API's attribute values (objects, bytes, null): the serializer takes whatever a span holds. */
const attributes = fc.dictionary(text, value, { maxKeys: 12 }) as fc.Arbitrary<ReadableSpan['attributes']>
const time: fc.Arbitrary<HrTime> = fc.tuple(fc.integer({ min: 0, max: 18_000_000_000 }), fc.integer({ min: 0, max: 999_999_999 }))
const traceState = fc.option(fc.constantFrom('', 'vendor=value', 'a=1,b=2').map(s => new TraceState(s)), { nil: undefined })
const context: fc.Arbitrary<SpanContext> = fc.record({
  traceId: hex(16), spanId: hex(8), traceFlags: fc.integer({ min: 0, max: 255 }), traceState, isRemote: fc.option(fc.boolean(), { nil: undefined }),
}, { requiredKeys: ['traceId', 'spanId', 'traceFlags'] })
const event: fc.Arbitrary<TimedEvent> = fc.record({ time, name: text, attributes: fc.option(attributes, { nil: undefined }), droppedAttributesCount: fc.option(fc.nat(300), { nil: undefined }) })
const link: fc.Arbitrary<Link> = fc.record({ context, attributes: fc.option(attributes, { nil: undefined }), droppedAttributesCount: fc.option(fc.nat(300), { nil: undefined }) })

const resources = [resourceFromAttributes({ 'service.name': 'toolgate', 'service.version': '1.0.0' }), resourceFromAttributes({ 'service.name': 'other', n: 3 }, { schemaUrl: 'https://example.com/resource' })]
const scopes = [{ name: 'toolgate', version: '1.0.0' }, { name: 'other', schemaUrl: 'https://example.com/schema', attributes: { a: 'b' }, droppedAttributesCount: 2 }, { name: '' }]

const span: fc.Arbitrary<ReadableSpan> = fc.record({
  name: text, kind: fc.option(fc.constantFrom(...[0, 1, 2, 3, 4] as SpanKind[]), { nil: undefined }), context,
  parent: fc.option(context, { nil: undefined }), startTime: time, endTime: time,
  status: fc.record({ code: fc.constantFrom(0, 1, 2), message: fc.option(text, { nil: undefined }) }),
  attributes, events: fc.array(event, { maxLength: 3 }), links: fc.array(link, { maxLength: 3 }),
  resource: fc.nat(resources.length - 1), scope: fc.nat(scopes.length - 1),
  dropped: fc.tuple(fc.nat(1_000), fc.nat(1_000), fc.nat(200_000)),
}).map(s => ({
  name: s.name, kind: s.kind!, spanContext: () => s.context, parentSpanContext: s.parent, startTime: s.startTime, endTime: s.endTime,
  status: s.status, attributes: s.attributes, links: s.links, events: s.events, duration: [0, 0], ended: true,
  resource: resources[s.resource]!, instrumentationScope: scopes[s.scope]!,
  droppedAttributesCount: s.dropped[0], droppedEventsCount: s.dropped[1], droppedLinksCount: s.dropped[2],
}))

describe('OTLP protobuf serializer', () => {
  it('writes what the SDK writes, for any spans', () => {
    fc.assert(fc.property(fc.array(span, { maxLength: 8 }), spans => { same(spans) }), { numRuns: 500 })
  })

  it('writes what the SDK writes for a batch past its buffer and for fields of multi-byte lengths', () => {
    const big = fc.sample(span, { numRuns: 400, seed: 7 })
    const huge = { ...big[0]!, attributes: { blob: 'x'.repeat(300_000), ['é'.repeat(200)]: ['y'.repeat(20_000)] } }
    same([...big, huge])
    same([huge])
  })

  it('writes what the SDK writes for spans the SDK made', async () => {
    const exporter = new InMemorySpanExporter()
    const provider = new BasicTracerProvider({ resource: resources[0], spanProcessors: [new SimpleSpanProcessor(exporter)] })
    const tracer = provider.getTracer('toolgate', '1.2.3')
    const server = tracer.startSpan('POST /tools/echo', { kind: SpanKind.SERVER, attributes: { 'http.request.method': 'POST', 'url.path': '/tools/echo' } })
    server.setAttribute('http.response.status_code', 200)
    const call = tracer.startSpan('execute_tool echo', { kind: SpanKind.INTERNAL })
    call.setAttributes({ 'gen_ai.tool.name': 'echo', 'toolgate.tool.effects': ['external', 'financial'], 'toolgate.queue_wait_ms': 0.25, 'toolgate.executed': true })
    call.addEvent('retry', { attempt: 2 })
    call.setStatus({ code: SpanStatusCode.ERROR, message: 'TOOLGATE_TIMEOUT' })
    call.end()
    server.end()
    await provider.forceFlush()
    const spans = exporter.getFinishedSpans()
    expect(spans).toHaveLength(2)
    same(spans)
    await provider.shutdown()
  })

  it('writes the same request of spans encoded one by one into an envelope, for any spans of one resource and scope', () => {
    fc.assert(fc.property(fc.array(span, { minLength: 1, maxLength: 8 }), fc.nat(resources.length - 1), fc.nat(scopes.length - 1), (drawn, r, s) => {
      const spans = drawn.map(one => ({ ...one, resource: resources[r]!, instrumentationScope: scopes[s]! }))
      // A small first buffer, so the fields grow it on the way.
      const fields = new Encoder(Buffer.allocUnsafe(16))
      for (const one of spans) writeSpanField(fields, one)
      const request = new SpanEnvelope(resources[r]!, scopes[s]!).request(fields.written())
      expect(Buffer.from(request).toString('hex')).toBe(Buffer.from(serializeSpans(spans)).toString('hex'))
    }), { numRuns: 300 })
  })

  it('writes the same request in an envelope for a batch whose lengths take several bytes', () => {
    const spans = fc.sample(span, { numRuns: 600, seed: 11 }).map(one => ({ ...one, resource: resources[1]!, instrumentationScope: scopes[1]! }))
    const fields = new Encoder(Buffer.allocUnsafe(16))
    for (const one of spans) writeSpanField(fields, one)
    expect(fields.length).toBeGreaterThan(2 ** 14)
    expect(Buffer.from(new SpanEnvelope(resources[1]!, scopes[1]!).request(fields.written())).equals(Buffer.from(serializeSpans(spans)))).toBe(true)
  })

  it('serializes no spans as an empty request', () => {
    expect(serializeSpans([])).toHaveLength(0)
  })
})
