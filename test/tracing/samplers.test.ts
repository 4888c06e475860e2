import { describe, expect, it } from 'vitest'
import fc from 'fast-check'
import { ROOT_CONTEXT, SpanKind, trace, type SpanContext } from '@opentelemetry/api'
import { AlwaysOffSampler, AlwaysOnSampler, ParentBasedSampler, SamplingDecision, TraceIdRatioBasedSampler, type Sampler } from '@opentelemetry/sdk-trace-node'
import { AlwaysOff, AlwaysOn, GatewaySpanContext, isValidParent, ParentBased, TraceIdRatio } from '../../src/services/tracing/samplers.js'

/*
 * toolgate's samplers against the SDK's: the same decision for any trace id and any parent
 * (valid or not, remote or local, sampled or not), and the same description.
 */

const hexOf = (bytes: number): fc.Arbitrary<string> => fc.uint8Array({ minLength: bytes, maxLength: bytes }).map(b => Buffer.from(b).toString('hex'))
/** Valid ids (lower and upper case), the all-zero ones, and what is not an id at all. */
const id = (bytes: number): fc.Arbitrary<string> => fc.oneof(
  hexOf(bytes), hexOf(bytes).map(s => s.toUpperCase()), fc.constant('0'.repeat(bytes * 2)),
  fc.string({ minLength: bytes * 2, maxLength: bytes * 2 }), fc.string({ maxLength: bytes * 3 }),
  hexOf(bytes).map(s => `${s.slice(1)}g`), hexOf(bytes).map(s => `${s.slice(1)}\u0130`),
)
const parent: fc.Arbitrary<SpanContext | undefined> = fc.option(fc.record({
  traceId: id(16), spanId: id(8), traceFlags: fc.integer({ min: 0, max: 255 }), isRemote: fc.option(fc.boolean(), { nil: undefined }),
}, { requiredKeys: ['traceId', 'spanId', 'traceFlags'] }), { nil: undefined })
const ratio = fc.oneof(fc.double({ min: -1, max: 2 }), fc.constantFrom(0, 1, 0.1, 0.5, Number.NaN))

const pairs = (r: number): Array<[string, Sampler, Sampler]> => [
  ['always_on', new AlwaysOn(), new AlwaysOnSampler()],
  ['always_off', new AlwaysOff(), new AlwaysOffSampler()],
  ['traceidratio', new TraceIdRatio(r), new TraceIdRatioBasedSampler(r)],
  ['parentbased_always_on', new ParentBased(new AlwaysOn()), new ParentBasedSampler({ root: new AlwaysOnSampler() })],
  ['parentbased_always_off', new ParentBased(new AlwaysOff()), new ParentBasedSampler({ root: new AlwaysOffSampler() })],
  ['parentbased_traceidratio', new ParentBased(new TraceIdRatio(r)), new ParentBasedSampler({ root: new TraceIdRatioBasedSampler(r) })],
]

describe('samplers', () => {
  it('decide as the SDK samplers do, for any trace id, parent and ratio', () => {
    fc.assert(fc.property(ratio, id(16), parent, (r, traceId, p) => {
      const context = p === undefined ? ROOT_CONTEXT : trace.setSpanContext(ROOT_CONTEXT, p)
      for (const [name, ours, theirs] of pairs(r)) {
        const decide = (sampler: Sampler): number => sampler.shouldSample(context, traceId, 'span', SpanKind.SERVER, {}, []).decision
        expect(decide(ours), name).toBe(decide(theirs))
        expect(ours.toString(), name).toBe(theirs.toString())
      }
    }), { numRuns: 2_000 })
  })

  it('sample about the ratio asked for', () => {
    const sampler = new TraceIdRatio(0.1)
    const ids = fc.sample(hexOf(16), 20_000)
    const sampled = ids.filter(traceId => sampler.shouldSample(ROOT_CONTEXT, traceId).decision !== SamplingDecision.NOT_RECORD).length
    expect(sampled / ids.length).toBeGreaterThan(0.09)
    expect(sampled / ids.length).toBeLessThan(0.11)
  })

  it('takes the gateway\'s own span contexts as valid and checks any other', () => {
    expect(isValidParent(new GatewaySpanContext('a'.repeat(32), 'b'.repeat(16), 1, undefined))).toBe(true)
    expect(isValidParent({ traceId: 'a'.repeat(32), spanId: 'b'.repeat(16), traceFlags: 1 })).toBe(true)
    expect(isValidParent({ traceId: '0'.repeat(32), spanId: 'b'.repeat(16), traceFlags: 1 })).toBe(false)
    expect(isValidParent({ traceId: 'a'.repeat(32), spanId: 'xyz', traceFlags: 1 })).toBe(false)
  })
})
