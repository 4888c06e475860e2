import { describe, expect, it } from 'vitest'
import { z } from 'zod'
import { defineToolCatalog } from '../../src/core/catalog.js'
import { defineTool } from '../../src/core/define-tool.js'
import type { ElicitationAnswer } from '../../src/core/elicitation.js'

/*
 * `ctx.elicit`: a call asks the person at the other end. Present only when the caller can be
 * asked; every answer that is not one, a listener that fails and a call that ends first read as
 * `cancel`, so a tool never hangs on a person past its own timeout.
 */

const asks = defineTool({
  id: 'asks', kind: 'read', description: 'Asks for a name.', isReadOnly: true, isConcurrencySafe: true, authorize () {}, timeoutMs: 300,
  inputSchema: z.object({}), outputSchema: z.object({ answer: z.unknown(), could: z.boolean() }),
  execute: async (_input, ctx) => {
    if (ctx.elicit === undefined) return { answer: null, could: false }
    return { answer: await ctx.elicit({ message: 'Your name?', requestedSchema: { type: 'object', properties: { name: { type: 'string' } } } }), could: true }
  },
})
const invoker = defineToolCatalog([asks as never]).bind({ app: {} })
const ask = async (onElicit?: (question: { message: string }) => Promise<unknown>): Promise<{ answer: ElicitationAnswer | null, could: boolean }> =>
  (await invoker.invoke({ toolId: 'asks', input: {}, ...(onElicit === undefined ? {} : { onElicit: onElicit as never }) })).value as never

describe('ctx.elicit', () => {
  it('asks the host and hands back its answer; without onElicit the tool cannot ask', async () => {
    const questions: string[] = []
    expect(await ask(async question => { questions.push(question.message); return { action: 'accept', content: { name: 'Ada' }, extra: 1 } }))
      .toEqual({ could: true, answer: { action: 'accept', content: { name: 'Ada' } } })
    expect(questions).toEqual(['Your name?'])
    expect(await ask(async () => ({ action: 'decline' }))).toEqual({ could: true, answer: { action: 'decline' } })
    expect(await ask()).toEqual({ could: false, answer: null })
  })

  it.each([
    ['an answer that is not one', async () => ({ action: 'maybe' })],
    ['an accept without content', async () => ({ action: 'accept' })],
    ['a listener that throws', async () => { throw new Error('host broke') }],
  ])('reads %s as cancel', async (_name, listener) => {
    expect(await ask(listener)).toEqual({ could: true, answer: { action: 'cancel' } })
  })

  it('a person who never answers holds the call no longer than its timeout', async () => {
    const started = performance.now()
    await expect(invoker.invoke({ toolId: 'asks', input: {}, onElicit: async () => await new Promise<never>(() => {}) })).rejects.toMatchObject({ status: 504 })
    expect(performance.now() - started).toBeLessThan(3_000)
  })

  it('refuses an onElicit that is not a function before the tool runs', async () => {
    await expect(invoker.invoke({ toolId: 'asks', input: {}, onElicit: 'yes' as never })).rejects.toMatchObject({ status: 400, code: 'TOOLGATE_INVALID_INPUT' })
  })
})
