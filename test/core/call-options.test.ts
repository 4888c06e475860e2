import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import { CALL_OPTIONS, readCallOptions, type CallOptionName, type FoundOption } from '../../src/core/call-options.js'

type OptionForm = FoundOption['form']
import { GatewayError } from '../../src/index.js'

const NAMES = Object.keys(CALL_OPTIONS) as CallOptionName[]
const FORMS: OptionForm[] = ['value', 'json', 'text']

function refusalOf (run: () => unknown): GatewayError | undefined {
  try {
    run()
    return undefined
  } catch (error) {
    if (error instanceof GatewayError) return error
    throw error
  }
}

const pointersOf = (error: GatewayError | undefined): string[] => ((error?.extensions.errors ?? []) as Array<{ pointer: string }>).map(issue => issue.pointer)

describe('readCallOptions: the one definition of a call\'s options', () => {
  it('takes each option in each of its forms', () => {
    expect(readCallOptions([
      { name: 'dryRun', form: 'text', raw: 'true', pointer: '/query/dryRun' },
      { name: 'mode', form: 'json', raw: 'plan', pointer: '/m' },
      { name: 'escalate', form: 'value', raw: false, pointer: '/e' },
      { name: 'idempotencyKey', form: 'text', raw: 'key-1', pointer: '/k' },
      { name: 'approvalId', form: 'json', raw: 'a'.repeat(32), pointer: '/a' },
      { name: 'waitForApprovalMs', form: 'text', raw: '30', pointer: '/w' },
    ])).toEqual({ dryRun: true, mode: 'plan', escalate: false, idempotencyKey: 'key-1', approvalId: 'a'.repeat(32), waitForApprovalMs: 30_000 })
    // The wait is seconds where a person or a protocol writes it, milliseconds in-process.
    expect(readCallOptions([{ name: 'waitForApprovalMs', form: 'json', raw: 2, pointer: '' }])).toEqual({ waitForApprovalMs: 2_000 })
    expect(readCallOptions([{ name: 'waitForApprovalMs', form: 'value', raw: 2_500, pointer: '' }])).toEqual({ waitForApprovalMs: 2_500 })
  })

  it('refuses every malformed one at once, each with its pointer, coded by the first', () => {
    const error = refusalOf(() => readCallOptions([
      { name: 'idempotencyKey', form: 'text', raw: 'has space', pointer: '/headers/idempotency-key' },
      { name: 'dryRun', form: 'text', raw: '1', pointer: '/query/dryRun' },
    ]))
    expect(error?.status).toBe(400)
    expect(error?.code).toBe('TOOLGATE_INVALID_IDEMPOTENCY_KEY')
    expect(pointersOf(error)).toEqual(['/headers/idempotency-key', '/query/dryRun'])
  })

  it('refuses one option given twice with two meanings, and takes it given twice alike', () => {
    const twice = (raw: string): FoundOption[] => [
      { name: 'dryRun', form: 'text', raw: 'true', pointer: '/query/dryRun' },
      { name: 'dryRun', form: 'json', raw: raw === 'true', pointer: '/params/_meta/x' },
    ]
    expect(pointersOf(refusalOf(() => readCallOptions(twice('false'))))).toEqual(['/params/_meta/x'])
    expect(readCallOptions(twice('true'))).toEqual({ dryRun: true })
  })

  it('never reads a present option as absent: any value is either parsed by its definition or refused', () => {
    fc.assert(fc.property(fc.constantFrom(...NAMES), fc.constantFrom(...FORMS), fc.jsonValue(), (name, form, raw) => {
      const spec = CALL_OPTIONS[name] as { value: { safeParse: (v: unknown) => { success: boolean, data?: unknown } }, json?: { safeParse: (v: unknown) => { success: boolean, data?: unknown } }, text: { safeParse: (v: unknown) => { success: boolean, data?: unknown } } }
      const schema = form === 'text' ? spec.text : form === 'json' ? spec.json ?? spec.value : spec.value
      const expected = schema.safeParse(raw)
      let options: Record<string, unknown> | undefined
      const error = refusalOf(() => { options = readCallOptions([{ name, form, raw, pointer: '/p' }]) as Record<string, unknown> })
      if (expected.success) {
        expect(options?.[name]).toEqual(expected.data)
        expect(options?.[name]).not.toBeUndefined()
      } else {
        expect(pointersOf(error)).toEqual(['/p'])
      }
    }), { numRuns: 2_000 })
  })

  it('a flag is exactly true or false: no 1, yes, TRUE or empty text', () => {
    for (const raw of ['1', '0', 'yes', 'TRUE', 'True', '', ' true']) {
      expect(pointersOf(refusalOf(() => readCallOptions([{ name: 'dryRun', form: 'text', raw, pointer: '/q' }]))), raw).toEqual(['/q'])
    }
    for (const raw of ['true', 1, null, {}]) {
      expect(refusalOf(() => readCallOptions([{ name: 'dryRun', form: 'json', raw, pointer: '/m' }])), JSON.stringify(raw)).toBeInstanceOf(GatewayError)
    }
  })
})
