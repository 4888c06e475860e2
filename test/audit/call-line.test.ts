import { describe, expect, it } from 'vitest'
import fc from 'fast-check'
import type { CallRecord } from '../../src/core/call-record.js'
import { callFields, isoTime, type CallFacts } from '../../src/services/audit/call-line.js'
import { fieldsOf } from '../../src/services/audit/chain.js'

/*
 * The hand-written call line against what it replaces: JSON.stringify of the entry object the
 * audit trail built for every call, field for field in this order.
 */
function reference (record: CallRecord, facts: CallFacts, inputDigest: string, includeInput: boolean): string {
  return fieldsOf({
    event: 'call',
    time: new Date(record.startedAt).toISOString(),
    principal: facts.principal,
    source: facts.source,
    tool: record.toolId,
    kind: record.kind,
    effects: record.effects,
    outcome: record.outcome,
    status: record.status,
    code: record.code,
    callId: record.callId,
    executed: record.executed,
    dryRun: record.dryRun,
    escalated: record.escalated,
    durationMs: Math.round(record.durationMs * 1000) / 1000,
    inputDigest,
    input: includeInput ? facts.input : undefined,
    touched: record.touchedResources,
    mutated: record.mutatedResources,
    debugSteps: record.debugSteps,
    requestId: facts.requestId,
    traceId: facts.traceId,
    approvalId: facts.approvalId,
    limit: record.limit,
    limitAction: record.limitAction,
    bundle: record.bundle,
  })
}

/** Any string: quotes, backslashes, control characters, lone and paired surrogates, plain ASCII. */
const text = fc.oneof(fc.string({ unit: 'binary' }), fc.string({ unit: 'grapheme-ascii' }), fc.constantFrom('', '"', '\\', '\u2028', '\ud800', '\udc00x', '😀', 'é'))
const optionalText = fc.option(text, { nil: undefined })
const anyNumber = fc.oneof(fc.double(), fc.integer(), fc.constantFrom(-0, Number.NaN, Infinity, -Infinity, 1e21, 5e-7))
const epochMs = fc.oneof(fc.integer({ min: 0, max: 253_402_300_799_999 }), fc.double({ min: 0, max: 4e12, noNaN: true }), fc.constantFrom(0, 999.999, 1_764_680_000_000))
const effects = fc.constantFrom<readonly string[]>(Object.freeze([]), Object.freeze(['irreversible']), Object.freeze(['financial', 'external']), ['external'])

const record = fc.record({
  callId: text, toolId: text, kind: text, effects, outcome: text, status: anyNumber, code: optionalText,
  executed: fc.boolean(), dryRun: fc.boolean(), escalated: fc.boolean(), startedAt: epochMs, durationMs: anyNumber,
  touchedResources: fc.array(text, { maxLength: 3 }), mutatedResources: fc.array(text, { maxLength: 3 }),
  debugSteps: fc.array(fc.record({ name: text, data: fc.option(fc.jsonValue(), { nil: undefined }) }, { requiredKeys: ['name'] }), { maxLength: 2 }),
  limit: optionalText, limitAction: fc.option(fc.constantFrom('refused', 'asked'), { nil: undefined }), bundle: optionalText,
}, { requiredKeys: ['callId', 'toolId', 'kind', 'effects', 'outcome', 'status', 'executed', 'dryRun', 'escalated', 'startedAt', 'durationMs', 'touchedResources', 'mutatedResources', 'debugSteps'] })
  .map(fields => fields as unknown as CallRecord)
const facts = fc.record({
  principal: text, source: optionalText, requestId: text, traceId: optionalText, approvalId: optionalText,
  input: fc.oneof(fc.jsonValue(), fc.constant(undefined), fc.constant(null)),
}, { requiredKeys: ['principal', 'requestId', 'input'] })

describe('the call line written by hand', () => {
  it('is JSON.stringify of the entry, for any record and facts, input written or not', () => {
    fc.assert(fc.property(record, facts, text, fc.boolean(), (r, f, digest, includeInput) => {
      const inputJson = includeInput && f.input !== undefined ? JSON.stringify(f.input) : undefined
      expect(callFields(r, f, digest, inputJson)).toBe(reference(r, f, digest, includeInput))
    }), { numRuns: 2_000 })
  })

  it('is JSON a parser reads back to the same entry', () => {
    fc.assert(fc.property(record, facts, (r, f) => {
      expect(JSON.parse(`{${callFields(r, f, 'sha256:x', undefined)}}`)).toEqual(JSON.parse(`{${reference(r, f, 'sha256:x', false)}}`))
    }), { numRuns: 300 })
  })

  it('a list of effects shown once is shown the same after it changed, unless it was frozen (and cannot)', () => {
    const r = (list: readonly string[]): CallRecord => ({ ...fc.sample(record, 1)[0]!, effects: list } as unknown as CallRecord)
    const open = ['external']
    const first = r(open)
    expect(callFields(first, { principal: 'p', requestId: 'q' }, 'd', undefined)).toContain('"effects":["external"]')
    open.push('financial')
    expect(callFields(r(open), { principal: 'p', requestId: 'q' }, 'd', undefined)).toContain('"effects":["external","financial"]')
  })
})

describe('isoTime', () => {
  it('is toISOString, for any time (fractions, before 1970, past 9999, not a number), in any order', () => {
    const times = fc.array(fc.oneof(epochMs, fc.double({ noNaN: false }), fc.integer({ min: -8.64e15, max: 8.64e15 }), fc.constantFrom(-1, -0.5, 8.64e15 + 1)), { minLength: 1, maxLength: 20 })
    fc.assert(fc.property(times, list => {
      for (const ms of list) {
        let expected: string | Error
        try { expected = new Date(ms).toISOString() } catch (error) { expected = error as Error }
        if (typeof expected === 'string') expect(isoTime(ms), String(ms)).toBe(expected)
        else expect(() => isoTime(ms)).toThrow(RangeError)
      }
    }), { numRuns: 2_000 })
  })

  it('many calls in one second, then the next: each millisecond as toISOString gives it', () => {
    const start = 1_764_680_000_000
    for (let ms = start - 3; ms < start + 2_005; ms += 0.75) expect(isoTime(ms)).toBe(new Date(ms).toISOString())
  })
})
