import { describe, expect, it } from 'vitest'
import fc from 'fast-check'
import { context, ROOT_CONTEXT, SpanKind, SpanStatusCode, trace, type Context, type Span, type Tracer } from '@opentelemetry/api'
import { AsyncLocalStorageContextManager } from '@opentelemetry/context-async-hooks'
import { suppressTracing } from '@opentelemetry/core'
import { resourceFromAttributes } from '@opentelemetry/resources'
import { AlwaysOffSampler, AlwaysOnSampler, BasicTracerProvider, InMemorySpanExporter, SamplingDecision, SimpleSpanProcessor, type ReadableSpan, type Sampler } from '@opentelemetry/sdk-trace-node'
import { ProtobufTraceSerializer } from '@opentelemetry/otlp-transformer'
import { PooledIdGenerator } from '../../src/services/tracing/id-generator.js'
import { AttributeShape, setShapedAttributes } from '../../src/services/tracing/own-attributes.js'
import { GatewayTracer } from '../../src/services/tracing/tracer.js'
import { serializeSpans } from './serialize-spans.js'

/*
 * The gateway's tracer against the SDK's, side by side: the same operations on a span of each
 * must record the same thing (ids and clock readings aside), so a tool's code that uses its
 * active span sees OpenTelemetry's rules, not toolgate's.
 */

const resource = resourceFromAttributes({ 'service.name': 'test' })

/** A tracer of each kind with the same limits (a value length of 12 by default; Infinity and 0, no cut, too). */
function pair (sampler: Sampler = new AlwaysOnSampler(), valueLength = 12): { ours: Tracer, theirs: Tracer, finished: () => [ReadableSpan[], ReadableSpan[]] } {
  const ourExporter = new InMemorySpanExporter()
  const theirExporter = new InMemorySpanExporter()
  const limits = { attributeCount: 6, attributeValueLength: valueLength, eventCount: 3, linkCount: 2, attributesPerEvent: 2, attributesPerLink: 2 }
  const ours = new GatewayTracer({ resource, scope: { name: 'toolgate', version: '1' }, processor: new SimpleSpanProcessor(ourExporter), limits }, sampler, new PooledIdGenerator())
  const theirs = new BasicTracerProvider({
    resource, sampler, spanProcessors: [new SimpleSpanProcessor(theirExporter)],
    spanLimits: { attributeCountLimit: 6, attributeValueLengthLimit: valueLength, eventCountLimit: 3, linkCountLimit: 2, attributePerEventCountLimit: 2, attributePerLinkCountLimit: 2 },
  }).getTracer('toolgate', '1')
  return { ours, theirs, finished: () => [ourExporter.getFinishedSpans(), theirExporter.getFinishedSpans()] }
}

/** What a span recorded, without what differs by nature (ids, readings of the clock). */
function recorded (span: ReadableSpan): unknown {
  return {
    name: span.name, kind: span.kind, parent: span.parentSpanContext?.spanId, status: span.status, attributes: span.attributes,
    events: span.events.map(e => ({ name: e.name, attributes: e.attributes, dropped: e.droppedAttributesCount })),
    links: span.links.map(l => ({ spanId: l.context.spanId, attributes: l.attributes, dropped: l.droppedAttributesCount })),
    dropped: [span.droppedAttributesCount, span.droppedEventsCount, span.droppedLinksCount],
    ended: span.ended, scope: span.instrumentationScope.name, resource: span.resource.attributes,
    flags: span.spanContext().traceFlags,
  }
}

const remote = { traceId: '0af7651916cd43dd8448eb211c80319c', spanId: 'b7ad6b7169203331', traceFlags: 1, isRemote: true }
const linked = (n: number): { traceId: string, spanId: string, traceFlags: number } => ({ traceId: remote.traceId, spanId: `00000000000000${String(n).padStart(2, '0')}`, traceFlags: 1 })

/** One step a tool's code might take on its span. */
type Step = (span: Span) => void
const key = fc.constantFrom('a', 'b', 'c', 'd', 'e', 'f', 'g', 'h', '')
const value = fc.oneof(fc.string({ maxLength: 20 }), fc.integer(), fc.double(), fc.boolean(), fc.array(fc.string({ maxLength: 15 }), { maxLength: 3 }), fc.constantFrom(null, undefined, { not: 'a value' }, [1, 'mixed']))
/** The gateway's own attributes, as a block of one shape (on the SDK's span: one by one, as `setShapedAttributes` sets them there). */
const ownValue = fc.oneof(fc.string({ maxLength: 20 }), fc.integer(), fc.double(), fc.boolean(), fc.array(fc.string({ maxLength: 15 }), { maxLength: 3 }))
const shaped = fc.uniqueArray(fc.constantFrom('a', 'b', 'c', 'd', 'e', 'f', 'g', 'h'), { minLength: 1, maxLength: 5 })
  .chain(keys => fc.tuple(fc.constant(keys), fc.array(ownValue, { minLength: keys.length, maxLength: keys.length }), fc.boolean()))
  .map(([keys, values, fixed]) => {
    const block = { shape: new AttributeShape(keys), values, fixed }
    return (span: Span) => { setShapedAttributes(span, block) }
  })
const step: fc.Arbitrary<Step> = fc.oneof(
  shaped,
  fc.tuple(key, value).map(([k, v]) => (span: Span) => { span.setAttribute(k, v as never) }),
  fc.dictionary(key, value, { maxKeys: 4 }).map(attrs => (span: Span) => { span.setAttributes(attrs as never) }),
  fc.tuple(fc.string({ maxLength: 6 }), fc.dictionary(key, value, { maxKeys: 4 })).map(([name, attrs]) => (span: Span) => { span.addEvent(name, attrs as never) }),
  fc.tuple(fc.string({ maxLength: 6 }), fc.constantFrom(new Date(1_700_000_000_123), 1_700_000_000_456, [1_700_000_000, 5] as [number, number])).map(([name, time]) => (span: Span) => { span.addEvent(name, time) }),
  fc.tuple(fc.nat(20), fc.dictionary(key, value, { maxKeys: 4 })).map(([n, attrs]) => (span: Span) => { span.addLink({ context: linked(n), attributes: attrs as never }) }),
  fc.record({ code: fc.constantFrom(SpanStatusCode.UNSET, SpanStatusCode.OK, SpanStatusCode.ERROR), message: fc.option(fc.string({ maxLength: 5 }), { nil: undefined }) }).map(status => (span: Span) => { span.setStatus(status) }),
  fc.string({ maxLength: 8 }).map(name => (span: Span) => { span.updateName(name) }),
  fc.constantFrom<Step>(
    span => { span.recordException(new TypeError('boom')) },
    span => { span.recordException('plain') },
    span => { span.recordException({ code: 'E_X', message: 'coded' }) },
    // What JavaScript lets a tool throw and record, past the API's types.
    span => { span.recordException(null as never) },
    span => { span.recordException(undefined as never) },
    span => { span.recordException({ code: null, name: 'E' } as never) },
    span => { span.recordException({ name: null } as never) },
    span => { span.recordException({ message: 0, code: 7 } as never) },
    // The caller's array changes after it was set: the span keeps what it was.
    span => {
      const list = ['one']
      span.setAttribute('list', list)
      list.push('two')
    },
  ),
)

describe('the gateway\'s tracer, beside the SDK\'s', () => {
  it('records what the SDK records for any steps, before and after end', () => {
    fc.assert(fc.property(fc.array(step, { maxLength: 14 }), fc.array(step, { maxLength: 3 }), fc.constantFrom(SpanKind.INTERNAL, SpanKind.SERVER), fc.constantFrom(12, Infinity, 0), (before, after, kind, valueLength) => {
      const { ours, theirs, finished } = pair(new AlwaysOnSampler(), valueLength)
      for (const tracer of [ours, theirs]) {
        const span = tracer.startSpan('op', { kind, attributes: { start: 'x' }, links: [{ context: linked(99) }] }, trace.setSpanContext(ROOT_CONTEXT, remote))
        for (const s of before) s(span)
        span.end()
        for (const s of after) s(span)
      }
      const [mine, sdk] = finished()
      expect(mine.map(recorded)).toEqual(sdk.map(recorded))
    }), { numRuns: 300 })
  })

  it('writes a span\'s own attributes, kept in blocks, as the SDK\'s serializer writes what the span says it holds', () => {
    fc.assert(fc.property(fc.array(step, { maxLength: 14 }), fc.constantFrom(Infinity, 0), (steps, valueLength) => {
      const { ours, finished } = pair(new AlwaysOnSampler(), valueLength)
      const span = ours.startSpan('op', { attributes: { start: 'x' } })
      for (const s of steps) s(span)
      span.end()
      const [[mine]] = finished()
      expect(Buffer.from(serializeSpans([mine!])).toString('hex')).toBe(Buffer.from(ProtobufTraceSerializer.serializeRequest([mine!])!).toString('hex'))
    }), { numRuns: 300 })
  })

  it('continues a parent from the context, starts a root with `root`, and leaves spans out as the sampler says', () => {
    const { ours, theirs, finished } = pair()
    for (const tracer of [ours, theirs]) {
      const parent = trace.setSpanContext(ROOT_CONTEXT, remote)
      const child = tracer.startSpan('child', {}, parent)
      expect(child.spanContext().traceId).toBe(remote.traceId)
      child.end()
      const root = tracer.startSpan('root', { root: true }, parent)
      expect(root.spanContext().traceId).not.toBe(remote.traceId)
      root.end()
      const suppressed = tracer.startSpan('suppressed', {}, suppressTracing(parent))
      expect(suppressed.isRecording()).toBe(false)
      expect(trace.isSpanContextValid(suppressed.spanContext())).toBe(false)
      suppressed.end()
    }
    const [mine, sdk] = finished()
    expect(mine.map(recorded)).toEqual(sdk.map(recorded))
    expect(mine.map(s => s.name)).toEqual(['child', 'root'])

    const off = pair(new AlwaysOffSampler())
    const dropped = off.ours.startSpan('dropped', {}, trace.setSpanContext(ROOT_CONTEXT, remote))
    expect(dropped.isRecording()).toBe(false)
    expect(dropped.spanContext()).toMatchObject({ traceId: remote.traceId, traceFlags: 0 })
    dropped.end()
    expect(off.finished()[0]).toEqual([])
  })

  it('records but does not export a span the sampler records unsampled', () => {
    const recordOnly: Sampler = { shouldSample: () => ({ decision: SamplingDecision.RECORD, attributes: { sampler: 'said' } }), toString: () => 'record only' }
    const { ours, finished } = pair(recordOnly)
    const span = ours.startSpan('kept here')
    expect(span.isRecording()).toBe(true)
    expect((span as unknown as ReadableSpan).attributes).toEqual({ sampler: 'said' })
    expect(span.spanContext().traceFlags).toBe(0)
    span.end()
    expect(finished()[0]).toEqual([])
  })

  it('runs startActiveSpan\'s function with the span active, in each of its forms', () => {
    const manager = new AsyncLocalStorageContextManager().enable()
    context.setGlobalContextManager(manager)
    try {
      const { ours } = pair()
      const seen: Array<string | undefined> = []
      const record = (span: Span): string => {
        seen.push(trace.getActiveSpan()?.spanContext().spanId)
        span.end()
        return span.spanContext().spanId
      }
      const ids = [
        ours.startActiveSpan('a', record), ours.startActiveSpan('b', { kind: SpanKind.CLIENT }, record), ours.startActiveSpan('c', {}, ROOT_CONTEXT, record),
        // An undefined context is the active one, as for the SDK's tracer.
        ours.startActiveSpan('d', {}, undefined as unknown as Context, record),
      ]
      expect(seen).toEqual(ids)
    } finally {
      context.disable()
    }
  })

  it('holds the gateway\'s own attributes to the span\'s limits, and to nothing once it ended', () => {
    const { ours } = pair()
    const span = ours.startSpan('own') as Span & ReadableSpan & { setTrusted: (attributes: Record<string, string | number>) => void }
    span.setTrusted({ a: 'abcdefghijklmnopq', b: 1, c: 2, d: 3, e: 4, f: 5, g: 6 })
    expect(span.attributes).toEqual({ a: 'abcdefghijkl', b: 1, c: 2, d: 3, e: 4, f: 5 })
    expect(span.droppedAttributesCount).toBe(1)
    span.end()
    span.setTrusted({ a: 'later' })
    expect(span.attributes['a']).toBe('abcdefghijkl')
  })

  it('takes times given as epoch milliseconds, Dates and HrTimes as the SDK does', () => {
    const { ours, theirs, finished } = pair()
    for (const tracer of [ours, theirs]) {
      const span = tracer.startSpan('timed', { startTime: new Date(1_700_000_000_000) })
      span.addEvent('at', [1_700_000_000, 250])
      span.end(1_700_000_001_500)
    }
    const [[mine], [sdk]] = finished()
    expect([mine!.startTime, mine!.endTime, mine!.duration, mine!.events[0]!.time]).toEqual([sdk!.startTime, sdk!.endTime, sdk!.duration, sdk!.events[0]!.time])
  })

  it('takes a time given as performance.now() as the SDK does: on the wall clock, within a millisecond', () => {
    const ms = ([s, ns]: [number, number]): number => s * 1e3 + ns / 1e6
    // Each tracer ties the monotonic clock to Date.now() (whole milliseconds) when its span
    // starts, in two clock reads: a thread preempted between them (a loaded CI machine: 1.7 ms
    // seen) ties it off by the pause. So the closest of five pairs is held to the millisecond.
    const apart: number[] = []
    for (let attempt = 0; attempt < 5; attempt++) {
      const { ours, theirs, finished } = pair()
      const at = performance.now() - 5
      for (const tracer of [ours, theirs]) {
        const span = tracer.startSpan('performance time', { startTime: null as never })
        span.addEvent('earlier', at)
        span.end()
      }
      const [[mine], [sdk]] = finished()
      apart.push(Math.abs(ms(mine!.events[0]!.time) - ms(sdk!.events[0]!.time)))
      expect(Math.abs(ms(mine!.events[0]!.time) - (Date.now() - 5))).toBeLessThan(1_000)
      expect(Math.abs(ms(mine!.startTime) - ms(sdk!.startTime))).toBeLessThan(50)
    }
    expect(Math.min(...apart)).toBeLessThan(1)
  })
})
