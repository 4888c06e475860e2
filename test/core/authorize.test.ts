import { describe, expect, it } from 'vitest'
import { ToolError } from '../../src/core/errors.js'
import { catalogOf, lastRecord, echoDeclaration, rejectionOf } from './helpers.js'

/** An echo tool whose authorize is given, and a count of how often execute ran. */
function toolAuthorizedBy (authorize: (...args: never[]) => unknown, errors?: unknown) {
  const counts = { execute: 0 }
  const declaration = echoDeclaration({ authorize, execute: (input: unknown) => { counts.execute++; return input }, ...(errors === undefined ? {} : { errors }) })
  const invoker = catalogOf([declaration]).bind({ app: undefined })
  return { counts, call: () => invoker.invoke({ toolId: 'echo', input: { text: 'a' } }) }
}

// Anything but undefined is a defect of the tool, never a pass, whatever its truthiness.
const nonVoid: Array<[string, () => unknown]> = [
  ['false', () => false],
  ['Promise<false>', async () => false],
  ["'yes'", () => 'yes'],
  ['{}', () => ({})],
  ['0', () => 0],
  ['true', () => true],
  ['null', () => null],
  ['Promise<{}>', () => Promise.resolve({})],
]

describe('authorize settles with void, or the call fails', () => {
  it.each(nonVoid)('rejects authorize returning %s with TOOLGATE_TOOL_BAD_DEFINITION (500) and runs nothing', async (_what, authorize) => {
    const tool = toolAuthorizedBy(authorize)
    const error = await rejectionOf(tool.call())
    expect(error.code).toBe('TOOLGATE_TOOL_BAD_DEFINITION')
    expect(error.status).toBe(500)
    expect(tool.counts.execute).toBe(0)
  })

  it('names the tool in the bad-definition message', async () => {
    const error = await rejectionOf(toolAuthorizedBy(() => false).call())
    expect(error.message).toContain('"echo"')
  })

  it('records the bad definition as its own outcome', async () => {
    await rejectionOf(toolAuthorizedBy(() => 'yes').call())
    expect(lastRecord()?.outcome).toBe('bad_definition')
  })

  it('runs execute once when authorize returns undefined', async () => {
    const tool = toolAuthorizedBy(() => undefined)
    await tool.call()
    expect(tool.counts.execute).toBe(1)
  })

  it('runs execute once when authorize resolves to undefined', async () => {
    const tool = toolAuthorizedBy(async () => {})
    await tool.call()
    expect(tool.counts.execute).toBe(1)
  })
})

describe('authorize denies by throwing', () => {
  it('turns a thrown Error into TOOLGATE_DENIED (403) carrying its message', async () => {
    const tool = toolAuthorizedBy(() => { throw new Error('not your file') })
    const error = await rejectionOf(tool.call())
    expect([error.code, error.status, error.message]).toEqual(['TOOLGATE_DENIED', 403, 'not your file'])
    expect(tool.counts.execute).toBe(0)
  })

  it('turns a rejected promise into TOOLGATE_DENIED (403)', async () => {
    const tool = toolAuthorizedBy(() => Promise.reject(new Error('nope')))
    const error = await rejectionOf(tool.call())
    expect([error.code, error.status, tool.counts.execute]).toEqual(['TOOLGATE_DENIED', 403, 0])
  })

  it('turns a thrown non-Error into TOOLGATE_DENIED naming the tool', async () => {
    const error = await rejectionOf(toolAuthorizedBy(() => { throw 'no' }).call())
    expect(error.code).toBe('TOOLGATE_DENIED')
    expect(error.message).toContain('"echo"')
  })

  it('passes a thrown ToolError (of a declared status) through with its own status and code', async () => {
    const tool = toolAuthorizedBy(() => { throw new ToolError(402, 'PAYMENT_REQUIRED', 'Top up first.') }, [{ status: 402, code: 'PAYMENT_REQUIRED', description: 'No credit left.' }])
    const error = await rejectionOf(tool.call())
    expect(error).toBeInstanceOf(ToolError)
    expect([error.status, error.code, error.message]).toEqual([402, 'PAYMENT_REQUIRED', 'Top up first.'])
    expect(tool.counts.execute).toBe(0)
  })

  it('gives authorize the parsed input and the bound app', async () => {
    const seen: unknown[] = []
    const declaration = echoDeclaration({ authorize (input: unknown, ctx: { app: unknown, toolId: string }) { seen.push(input, ctx.app, ctx.toolId) } })
    await catalogOf([declaration]).bind({ app: { user: 'ann' } }).invoke({ toolId: 'echo', input: { text: 'a', dropped: 1 } })
    expect(seen).toEqual([{ text: 'a' }, { user: 'ann' }, 'echo'])
  })
})
