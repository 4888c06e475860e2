import { describe, expect, it } from 'vitest'
import { exemplarOf, logFieldsOf } from '../../src/services/tracing/span-ids.js'

const TRACE = '0af7651916cd43dd8448eb211c80319c'
const SPAN = 'b7ad6b7169203331'

describe('a call\'s span ids, read off its traceparent', () => {
  it('are the traceparent\'s fields', () => {
    expect(logFieldsOf({ traceparent: `00-${TRACE}-${SPAN}-01` })).toEqual({ trace_id: TRACE, span_id: SPAN, trace_flags: '01' })
    expect(logFieldsOf({ traceparent: `00-${TRACE}-${SPAN}-00`, tracestate: 'a=b' })).toEqual({ trace_id: TRACE, span_id: SPAN, trace_flags: '00' })
  })

  it('make an exemplar only for a sampled call', () => {
    expect(exemplarOf({ traceparent: `00-${TRACE}-${SPAN}-01` })).toMatchObject({ traceId: TRACE, spanId: SPAN })
    expect(exemplarOf({ traceparent: `00-${TRACE}-${SPAN}-03` })).toMatchObject({ traceId: TRACE })
    expect(exemplarOf({ traceparent: `00-${TRACE}-${SPAN}-00` })).toBeUndefined()
    expect(exemplarOf({ traceparent: `00-${TRACE}-${SPAN}-02` })).toBeUndefined()
    // Every last hex digit: odd ones are sampled.
    for (const [digit, sampled] of [...'0123456789abcdef'].map((d, i) => [d, i % 2 === 1] as const)) {
      expect(exemplarOf({ traceparent: `00-${TRACE}-${SPAN}-0${digit}` }) !== undefined, digit).toBe(sampled)
    }
  })

  it('are none for no context or one of another shape', () => {
    expect(logFieldsOf(undefined)).toBeUndefined()
    expect(exemplarOf(undefined)).toBeUndefined()
    expect(logFieldsOf({ traceparent: `01-${TRACE}-${SPAN}-01` })).toBeUndefined()
    expect(exemplarOf({ traceparent: `01-${TRACE}-${SPAN}-01` })).toBeUndefined()
    expect(logFieldsOf({ traceparent: `00-${TRACE}-${SPAN}-01-extra` })).toBeUndefined()
    expect(logFieldsOf({ traceparent: 'garbage' })).toBeUndefined()
  })
})
