import { describe, expect, it } from 'vitest'
import { createContextKey, propagation, ROOT_CONTEXT, trace } from '@opentelemetry/api'
import { W3CTraceContextPropagator } from '@opentelemetry/core'
import { AlwaysOnSampler, BasicTracerProvider } from '@opentelemetry/sdk-trace-node'
import { ServerSpan } from '../../src/services/tracing/server-span.js'

/*
 * The server span's context (what a call span takes as its parent) reads as `trace.setSpan`'s
 * would: the span in it, the caller's trace behind it, and writes that keep both.
 */

const tracer = new BasicTracerProvider({ sampler: new AlwaysOnSampler() }).getTracer('test')
const serverSpan = (headers: Record<string, string> = {}): ServerSpan =>
  new ServerSpan(tracer, { method: 'POST', path: '/tools/echo', headers, details: () => ({ route: '/tools/:id', scheme: 'http', httpVersion: '1.1' }) })

describe('server span context', () => {
  it('holds the span, and the caller\'s trace as its parent', () => {
    propagation.setGlobalPropagator(new W3CTraceContextPropagator())
    const caller = '00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01'
    const server = serverSpan({ traceparent: caller })
    expect(trace.getSpan(server.context)).toBe(server.span)
    expect(trace.getSpanContext(server.context)?.traceId).toBe('0af7651916cd43dd8448eb211c80319c')
    const child = tracer.startSpan('child', {}, server.context)
    expect(child.spanContext().traceId).toBe('0af7651916cd43dd8448eb211c80319c')
    expect((child as unknown as { parentSpanContext?: { spanId: string } }).parentSpanContext?.spanId).toBe(server.span.spanContext().spanId)
    propagation.disable()
  })

  it('answers other keys from the caller\'s context, and writes keep the span and what was there', () => {
    const key = createContextKey('test key')
    const other = createContextKey('other key')
    const server = serverSpan()
    expect(server.context.getValue(key)).toBeUndefined()
    const written = server.context.setValue(key, 'value')
    expect(written.getValue(key)).toBe('value')
    expect(trace.getSpan(written)).toBe(server.span)
    expect(written.setValue(other, 2).getValue(key)).toBe('value')
    expect(trace.getSpan(trace.deleteSpan(server.context))).toBeUndefined()
    expect(trace.getSpan(server.context.deleteValue(key))).toBe(server.span)
    expect(trace.getSpan(ROOT_CONTEXT)).toBeUndefined()
  })
})
