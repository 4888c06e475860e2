import { describe, expect, it } from 'vitest'
import { defineTool } from '../../src/core/define-tool.js'
import { ToolDefinitionError, ToolError } from '../../src/core/errors.js'
import type { ToolDeclaration } from '../../src/core/tool.js'
import { catalogOf, echoDeclaration, lastRecord, rejectionOf, writeDeclaration, type LooseDeclaration } from './helpers.js'

const LOCKED = { status: 423, code: 'NOTE_LOCKED', description: 'The note is locked.' }
const define = (declaration: LooseDeclaration) => defineTool(declaration as unknown as ToolDeclaration)
const throwing = (error: () => ToolError, overrides: LooseDeclaration = {}) => writeDeclaration('act', () => { throw error() }, overrides)
const call = (declaration: LooseDeclaration, request: { idempotencyKey?: string, dryRun?: boolean } = {}) =>
  catalogOf([declaration]).bind({ app: undefined }).invoke({ toolId: String(declaration.id), input: {}, ...request })

describe('errors: the declaration of a tool\'s own failures', () => {
  // [what is wrong, the errors value, the field the message must name]
  const rejected: Array<[string, unknown, string]> = [
    ['not an array', LOCKED, 'errors'],
    ['an entry that is not an object', ['NOTE_LOCKED'], 'errors[0]'],
    ['a status below 400', [{ ...LOCKED, status: 302 }], 'errors[0].status'],
    ['a status above 599', [{ ...LOCKED, status: 600 }], 'errors[0].status'],
    ['a fractional status', [{ ...LOCKED, status: 423.5 }], 'errors[0].status'],
    ['a lowercase code', [{ ...LOCKED, code: 'locked' }], 'errors[0].code'],
    ['a gateway code', [{ ...LOCKED, code: 'TOOLGATE_LOCKED' }], 'errors[0].code'],
    ['a code declared twice', [LOCKED, { ...LOCKED, status: 409 }], 'errors[1].code'],
    ['a blank description', [{ ...LOCKED, description: ' ' }], 'errors[0].description'],
    ['an unknown entry field', [{ ...LOCKED, retry: true }], 'errors[0]'],
  ]
  it.each(rejected)('defineTool rejects %s, naming the field', (_what, errors, field) => {
    let error: unknown
    try { define(echoDeclaration({ errors })) } catch (thrown) { error = thrown }
    expect(error).toBeInstanceOf(ToolDefinitionError)
    expect((error as ToolDefinitionError).field).toBe(field)
  })

  it('is kept as a frozen copy sorted by status, and is empty when absent', () => {
    const declared = [{ ...LOCKED }, { status: 409, code: 'NOTE_EXISTS', description: 'Exists.' }]
    const tool = define(echoDeclaration({ errors: declared }))
    declared[0]!.status = 500
    expect(tool.errors.map(e => [e.status, e.code])).toEqual([[409, 'NOTE_EXISTS'], [423, 'NOTE_LOCKED']])
    expect(Object.isFrozen(tool.errors) && Object.isFrozen(tool.errors[0])).toBe(true)
    expect(define(echoDeclaration()).errors).toEqual([])
  })
})

describe('a thrown ToolError is answered with its own status and code (the contract), declared or not', () => {
  it('a declared status outside the gateway\'s is answered as thrown', async () => {
    const error = await rejectionOf(call(throwing(() => new ToolError(423, 'NOTE_LOCKED', 'locked'), { errors: [LOCKED] })))
    expect([error.status, error.code]).toEqual([423, 'NOTE_LOCKED'])
    expect(lastRecord()?.outcome).toBe('tool_error')
  })

  it('an undeclared status outside the gateway\'s is answered as thrown too: declaring it is what puts it in the document', async () => {
    const error = await rejectionOf(call(throwing(() => new ToolError(423, 'NOTE_LOCKED', 'locked'))))
    expect([error.status, error.code]).toEqual([423, 'NOTE_LOCKED'])
    expect(lastRecord()?.outcome).toBe('tool_error')
  })

  it('holds for a ToolError thrown by authorize and by resolve (a dry run), and for a replayed answer', async () => {
    const locked = (): never => { throw new ToolError(423, 'NOTE_LOCKED', 'locked') }
    expect((await rejectionOf(call(writeDeclaration('act', () => null, { authorize: locked })))).code).toBe('NOTE_LOCKED')
    expect((await rejectionOf(call(writeDeclaration('act', () => null, { resolve: locked }), { dryRun: true }))).code).toBe('NOTE_LOCKED')
    const catalog = catalogOf([throwing(() => new ToolError(423, 'NOTE_LOCKED', 'locked'), { errors: [LOCKED] })])
    const invoke = () => catalog.bind({ app: undefined }).invoke({ toolId: 'act', input: {}, idempotencyKey: 'k' })
    expect((await rejectionOf(invoke())).code).toBe('NOTE_LOCKED')
    const replayed = await rejectionOf(invoke())
    expect([replayed.status, replayed.code, replayed.replayed]).toEqual([423, 'NOTE_LOCKED', true])
  })
})
