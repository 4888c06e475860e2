import { afterEach, describe, expect, it, vi } from 'vitest'
import { ToolError } from '../../src/core/errors.js'
import { catalogOf, echoDeclaration, rejectionOf, writeDeclaration } from './helpers.js'

afterEach(() => { vi.restoreAllMocks() })

/** A promise-like that is not a Promise, as some libraries return. */
const thenable = <T>(settle: (resolve: (value: T) => void, reject: (error: unknown) => void) => void): PromiseLike<T> =>
  ({ then: (onValue, onError) => new Promise<T>(settle).then(onValue, onError) })

describe('synchronous tools', () => {
  it('run without a timer: a plain value settles before any timeout could fire', async () => {
    const timers = vi.spyOn(globalThis, 'setTimeout')
    const invoker = catalogOf([echoDeclaration()]).bind({ app: undefined })
    expect((await invoker.invoke({ toolId: 'echo', input: { text: 'hi' } })).value).toEqual({ text: 'hi' })
    expect(timers).not.toHaveBeenCalled()
  })

  it('an async tool still gets its hard timeout', async () => {
    const timers = vi.spyOn(globalThis, 'setTimeout')
    const invoker = catalogOf([echoDeclaration({ execute: async (input: { text: string }) => input, timeoutMs: 1234 })]).bind({ app: undefined })
    await invoker.invoke({ toolId: 'echo', input: { text: 'hi' } })
    expect(timers.mock.calls.some(([, ms]) => ms === 1234)).toBe(true)
  })

  it('an abort inside a synchronous execute wins over its value, and the slot is free at once', async () => {
    const controller = new AbortController()
    const catalog = catalogOf([writeDeclaration('abort_then_return', () => { controller.abort(); return 'done' }), writeDeclaration('next', () => 'ran')])
    const error = await rejectionOf(catalog.bind({ app: undefined, domain: 'd', execution: { signal: controller.signal } }).invoke({ toolId: 'abort_then_return', input: {} }))
    expect(error.code).toBe('TOOLGATE_CANCELLED')
    expect(error.extensions.outcome).toBe('unknown') // it began, and it is not read-only
    // Both tools run exclusively in domain "d": the next one starts only if the slot was released.
    expect(catalog.scheduler.domainCount).toBe(0)
    expect((await catalog.bind({ app: undefined, domain: 'd' }).invoke({ toolId: 'next', input: {} })).value).toBe('ran')
  })

  it('a synchronous throw is the tool failing (500), not a crash of the pipeline', async () => {
    const invoker = catalogOf([writeDeclaration('boom', () => { throw new Error('secret detail') })]).bind({ app: undefined })
    const error = await rejectionOf(invoker.invoke({ toolId: 'boom', input: {} }))
    expect(error.code).toBe('TOOLGATE_TOOL_FAILED')
    expect(error.message).not.toContain('secret detail')
  })
})

describe('promise-likes that are not Promises', () => {
  it('execute: a thenable is waited for, its value and its ToolError alike', async () => {
    const catalog = catalogOf([
      writeDeclaration('ok', () => thenable<string>(resolve => { setTimeout(() => { resolve('later') }, 5) })),
      writeDeclaration('refuse', () => thenable((_resolve, reject) => { reject(new ToolError(409, 'TAKEN', 'already taken')) })),
    ])
    const invoker = catalog.bind({ app: undefined })
    expect((await invoker.invoke({ toolId: 'ok', input: {} })).value).toBe('later')
    expect((await rejectionOf(invoker.invoke({ toolId: 'refuse', input: {} }))).code).toBe('TAKEN')
  })

  it('authorize: a rejecting thenable denies (403), a thenable settling with a value is a tool defect (500)', async () => {
    const invoker = catalogOf([
      echoDeclaration({ id: 'denies', authorize: () => thenable((_resolve, reject) => { reject(new Error('not yours')) }) }),
      echoDeclaration({ id: 'returns', authorize: () => thenable(resolve => { resolve(false) }) }),
    ]).bind({ app: undefined })
    const denied = await rejectionOf(invoker.invoke({ toolId: 'denies', input: { text: 'x' } }))
    expect([denied.code, denied.status, denied.message]).toEqual(['TOOLGATE_DENIED', 403, 'not yours'])
    expect((await rejectionOf(invoker.invoke({ toolId: 'returns', input: { text: 'x' } }))).code).toBe('TOOLGATE_TOOL_BAD_DEFINITION')
  })
})
