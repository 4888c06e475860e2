import { describe, expect, it } from 'vitest'
import { z } from 'zod'
import { ToolError } from '../../src/core/errors.js'
import { catalogOf, lastRecord, echoDeclaration, rejectionOf, writeDeclaration, type LooseDeclaration } from './helpers.js'

const call = (declaration: LooseDeclaration, input: unknown = {}) =>
  catalogOf([declaration]).bind({ app: undefined }).invoke({ toolId: String(declaration.id), input })

const SECRET = 'sk-live-do-not-leak'

describe('output', () => {
  const leaky = writeDeclaration('leaky', () => ({ token: SECRET }), { outputSchema: z.object({ ok: z.boolean() }) })

  it('fails invalid output with TOOLGATE_INVALID_OUTPUT (502)', async () => {
    const error = await rejectionOf(call(leaky))
    expect([error.code, error.status]).toEqual(['TOOLGATE_INVALID_OUTPUT', 502])
  })

  it('keeps the raw value out of the error message and extensions', async () => {
    const error = await rejectionOf(call(leaky))
    expect(error.message).not.toContain(SECRET)
    expect(JSON.stringify(error.extensions)).not.toContain(SECRET)
  })

  it('returns the parsed output, not the raw value', async () => {
    const tool = writeDeclaration('strip', () => ({ ok: true, extra: SECRET }), { outputSchema: z.object({ ok: z.boolean() }) })
    expect((await call(tool)).value).toEqual({ ok: true })
  })

  it('uses a parseOutput override instead of the output schema', async () => {
    const parseOutput = (value: unknown) => ({ wrapped: value })
    const { value } = await call(writeDeclaration('wrap', () => 7, { outputSchema: z.number(), parseOutput }))
    expect(value).toEqual({ wrapped: 7 })
  })

  it('fails with TOOLGATE_INVALID_OUTPUT when the parseOutput override throws', async () => {
    const parseOutput = () => { throw new Error(`bad ${SECRET}`) }
    const error = await rejectionOf(call(writeDeclaration('wrap', () => 7, { outputSchema: z.number(), parseOutput })))
    expect(error.code).toBe('TOOLGATE_INVALID_OUTPUT')
    expect(error.message).not.toContain(SECRET)
  })
})

describe('execute throwing', () => {
  it('passes a ToolError through with its own status and code', async () => {
    const error = await rejectionOf(call(writeDeclaration('pay', () => { throw new ToolError(409, 'INSUFFICIENT_FUNDS', 'Too low.') })))
    expect(error).toBeInstanceOf(ToolError)
    expect([error.status, error.code, error.message]).toEqual([409, 'INSUFFICIENT_FUNDS', 'Too low.'])
    expect(lastRecord()?.outcome).toBe('tool_error')
  })

  it('passes a ToolError from an async execute through', async () => {
    const error = await rejectionOf(call(writeDeclaration('pay', async () => { throw new ToolError(422, 'BAD_ACCOUNT', 'No such account.') })))
    expect([error.status, error.code]).toEqual([422, 'BAD_ACCOUNT'])
  })

  const thrown: Array<[string, unknown]> = [['an Error', new Error(`db password ${SECRET}`)], ['42', 42], ['null', null], ['undefined', undefined]]
  it.each(thrown)('turns a thrown %s into TOOLGATE_TOOL_FAILED (500) with no internals', async (_what, value) => {
    const error = await rejectionOf(call(writeDeclaration('boom', () => { throw value })))
    expect([error.code, error.status]).toEqual(['TOOLGATE_TOOL_FAILED', 500])
    expect(error.message).not.toContain(SECRET)
    expect(lastRecord()?.outcome).toBe('tool_failed')
  })
})

describe('input', () => {
  const nested = echoDeclaration({
    id: 'nested',
    inputSchema: z.object({ a: z.object({ b: z.array(z.number()) }), 'x/y': z.string() }),
    outputSchema: z.unknown(),
    execute: () => { throw new Error('must not run') },
  })

  it('fails invalid input with TOOLGATE_INVALID_INPUT (400)', async () => {
    const error = await rejectionOf(call(nested, { a: { b: [1, 'two'] }, 'x/y': 's' }))
    expect([error.code, error.status]).toEqual(['TOOLGATE_INVALID_INPUT', 400])
  })

  it('lists every issue with its JSON pointer', async () => {
    const error = await rejectionOf(call(nested, { a: { b: [1, 'two'] } }))
    const pointers = (error.extensions.errors as Array<{ pointer: string }>).map(issue => issue.pointer)
    expect(pointers.sort()).toEqual(['/a/b/1', '/x~1y'])
  })

  it('gives each issue a message and a code', async () => {
    const error = await rejectionOf(call(nested, { a: { b: ['two'] }, 'x/y': 's' }))
    expect(error.extensions.errors).toEqual([{ pointer: '/a/b/0', message: expect.any(String), code: 'invalid_type' }])
  })

  it('runs neither authorize nor execute on invalid input', async () => {
    const ran: string[] = []
    const tool = { ...nested, authorize: () => { ran.push('authorize') }, execute: () => { ran.push('execute') } }
    await rejectionOf(call(tool, {}))
    expect(ran).toEqual([])
  })

  it('gives execute the parsed input, defaults applied', async () => {
    const tool = echoDeclaration({ inputSchema: z.object({ text: z.string().default('hi') }) })
    expect((await call(tool, {})).value).toEqual({ text: 'hi' })
  })
})
