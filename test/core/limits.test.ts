import { describe, expect, it } from 'vitest'
import { z } from 'zod'
import { AmountProblem, amountSchemaProblem, celAmount } from '../../src/core/limits/amount.js'
import { ToolLimitDeclarationSchema } from '../../src/core/limits/declaration.js'
import { unitsOf } from '../../src/core/limits/limit.js'
import { MemoryLimitStore } from '../../src/core/limits/memory-store.js'
import { issueText } from '../../src/core/limits/tool-limits.js'
import { durationMs, fixedWindowOf } from '../../src/core/limits/windows.js'
import { toJsonSchema } from '../../src/core/schema.js'
import { windowEntry } from './limits-model.js'

describe('unitsOf', () => {
  it('never rounds a positive amount to nothing: the smallest counts as one unit', () => {
    expect(unitsOf(0.0001)).toBe(1)
    expect(unitsOf(0.00004)).toBe(1)
    expect(unitsOf(1e-12)).toBe(1)
    expect(unitsOf(0)).toBe(0)
  })

  it('counts an amount in ten-thousandths', () => {
    expect(unitsOf(12.5)).toBe(125_000)
    expect(unitsOf(0.0003)).toBe(3)
  })
})

describe('celAmount', () => {
  it('reads a number from the input', () => {
    expect(celAmount('input.amount')({ amount: 12.5 })).toBe(12.5)
  })

  it('takes an int literal (a bigint in CEL) as a number', () => {
    expect(celAmount('2')({})).toBe(2)
  })

  it('mixes the input\'s numbers (doubles in CEL) with int literals, as written', () => {
    const input = { quantity: 3, price: 1.5 }
    expect([celAmount('input.quantity * 2')(input), celAmount('2 * input.quantity + 1')(input), celAmount('input.quantity * input.price / 3')(input), celAmount('input.quantity - 1')(input)]).toEqual([6, 7, 1.5, 2])
  })

  it('refuses a negative amount at the call, saying so', () => {
    expect(() => celAmount('input.amount')({ amount: -1 })).toThrow(new AmountProblem('its amount (input.amount) is -1, below zero'))
  })

  it('refuses a string where the amount should be, naming what it got', () => {
    expect(() => celAmount('input.amount')({ amount: '5' })).toThrow(new AmountProblem('its amount (input.amount) is the string "5", not a number'))
  })

  it('refuses an input without the field, naming it', () => {
    const amount = celAmount('input.amount')
    expect(() => amount({})).toThrow(AmountProblem)
    expect(() => amount({})).toThrow(/its amount \(input\.amount\) cannot be evaluated for this input: .*amount/)
  })

  it('refuses an expression that does not parse when it is compiled, not at a call', () => {
    expect(() => celAmount('input.a +')).toThrow(Error)
  })

  it('refuses an expression that cannot be a number when it is compiled', () => {
    expect(() => celAmount('"ten"')).toThrow('is a string expression; an amount is a number')
  })
})

describe('amountSchemaProblem', () => {
  const schema = toJsonSchema(z.object({ amount: z.number(), note: z.string() }), 'output')

  it('names a field the input does not have', () => {
    expect(amountSchemaProblem('input.amout * 1.5', schema)).toBe('reads input.amout, which the tool\'s input does not have')
  })

  it('names a field that is not a number', () => {
    expect(amountSchemaProblem('input.note', schema)).toBe('reads input.note, which the tool\'s input types as "string", not a number')
  })

  it('finds no problem with a numeric field', () => {
    expect(amountSchemaProblem('input.amount * 1.5', schema)).toBeUndefined()
  })
})

describe('windows', () => {
  it('refuses a duration that is zero, past a year, fractional or without a number', () => {
    for (const text of ['0s', '367d', '1.5h', 'h', '999ms', '01s', '90 s']) expect(durationMs(text), text).toBeUndefined()
  })

  it('reads a duration in its unit, up to 366 days', () => {
    expect(durationMs('90s')).toBe(90_000)
    expect(durationMs('1000ms')).toBe(1_000)
    expect(durationMs('366d')).toBe(366 * 86_400_000)
  })

  it('starts a week on the Monday before a Sunday', () => {
    const sunday = Date.parse('2026-12-06T12:00:00Z')
    expect(fixedWindowOf('week')!.bounds(sunday)).toEqual({ start: Date.parse('2026-11-30T00:00:00Z'), end: Date.parse('2026-12-07T00:00:00Z') })
  })

  it('names no window for an unknown word', () => {
    expect(fixedWindowOf('fortnight')).toBeUndefined()
  })
})

describe('ToolLimitDeclarationSchema', () => {
  const rate = { calls: 10, window: '1m' }
  const problem = (raw: unknown): { path: PropertyKey[], text: string } => {
    const parsed = ToolLimitDeclarationSchema.safeParse(raw)
    if (parsed.success) throw new Error('the declaration passed')
    return { path: parsed.error.issues[0]!.path, text: issueText(parsed.error.issues[0]!) }
  }

  it('takes a limit of one kind', () => {
    expect(ToolLimitDeclarationSchema.parse({ name: 'per-minute', per: 'principal', rate })).toMatchObject({ over: 'refuse', rate })
  })

  it('refuses an unknown field, naming it', () => {
    expect(problem({ name: 'a', per: 'principal', rate, colour: 'red' })).toEqual({ path: [], text: 'unknown key "colour"' })
  })

  it('refuses an unknown field inside a kind, naming it where it is', () => {
    expect(problem({ name: 'a', per: 'principal', rate: { ...rate, extra: 1 } })).toEqual({ path: ['rate'], text: 'unknown key "extra"' })
  })

  it('refuses two kinds in one limit', () => {
    expect(problem({ name: 'a', per: 'principal', rate, quota: { calls: 5, window: 'day' } }).text).toBe('has rate and quota: one kind per limit')
  })

  it('refuses a limit of no kind', () => {
    expect(problem({ name: 'a', per: 'principal' }).text).toBe('needs one of rate, quota or budget')
  })
})

describe('MemoryLimitStore', () => {
  const now = Date.parse('2026-12-04T12:00:10Z')
  const minute = fixedWindowOf('minute')!

  it('refuses a new count while live ones fill its table, and takes it once their windows have ended', () => {
    const store = new MemoryLimitStore({ maxKeys: 2 })
    for (const name of ['a', 'b']) expect(store.decide([windowEntry(name, minute.bounds(now), 1, 10)], now, true).type).toBe('taken')
    expect(() => store.decide([windowEntry('c', minute.bounds(now), 1, 10)], now, true)).toThrow(expect.objectContaining({ code: 'TOOLGATE_STORE_UNAVAILABLE' }))
    const later = minute.bounds(now).end
    expect(store.decide([windowEntry('c', minute.bounds(later), 1, 10)], later, true).type).toBe('taken')
    expect(store.size).toBe(1)
  })

  it('crowds out a principal\'s session past the group\'s bound, and lets a member in', () => {
    const store = new MemoryLimitStore()
    const session = (id: string) => [windowEntry(`s-${id}`, minute.bounds(now), 1, 10, { group: { key: 'alice', member: id, max: 2 } })]
    expect(store.decide(session('one'), now, true).type).toBe('taken')
    expect(store.decide(session('two'), now, true).type).toBe('taken')
    expect(store.decide(session('three'), now, true)).toEqual({ type: 'crowded', index: 0 })
    expect(store.decide(session('one'), now, true).type).toBe('taken')
  })
})
