import { describe, expect, it } from 'vitest'
import { z } from 'zod'
import type { CallRecord } from '../../src/core/call-record.js'
import { catalogOf, echoDeclaration, rejectionOf, sleep, writeDeclaration, type LooseDeclaration } from './helpers.js'

const files = z.object({ read: z.array(z.string()), write: z.array(z.string()) })

const copyTool = (overrides: LooseDeclaration = {}): LooseDeclaration => writeDeclaration('copy', () => ({ copied: 1 }), {
  inputSchema: files,
  outputSchema: z.object({ copied: z.number() }),
  effects: ['irreversible', 'external'],
  touchedResourcesOf: (input: { read: string[] }) => input.read,
  mutatedResourcesOf: (input: { write: string[] }) => input.write,
  debugSteps: (result: { copied: number }, ctx: { step: (name: string, data?: unknown) => void }) => { ctx.step('copied', result.copied) },
  ...overrides,
})

/** Run one call of `declaration` and return every record both observers saw. */
async function recordsOf (declaration: LooseDeclaration, input: unknown) {
  const fromCatalog: CallRecord[] = []
  const fromBinding: CallRecord[] = []
  const invoker = catalogOf([declaration], { onRecord: r => fromCatalog.push(r) }).bind({ app: undefined, domain: 'session-1', onRecord: r => fromBinding.push(r) })
  const result = await invoker.invoke({ toolId: String(declaration.id), input }).catch((error: unknown) => error)
  return { fromCatalog, fromBinding, result }
}

const input = { read: ['/a'], write: ['/b', '/c'] }

describe('the record of a call', () => {
  it('reaches the catalog onRecord and the bind onRecord exactly once each', async () => {
    const { fromCatalog, fromBinding } = await recordsOf(copyTool(), input)
    expect([fromCatalog.length, fromBinding.length]).toEqual([1, 1])
    expect(fromCatalog[0]).toBe(fromBinding[0])
  })

  it('is the record the result carries', async () => {
    const { fromCatalog, result } = await recordsOf(copyTool(), input)
    expect((result as { record: CallRecord }).record).toBe(fromCatalog[0])
  })

  it('describes the tool, the domain and the outcome', async () => {
    const { fromCatalog: [record] } = await recordsOf(copyTool(), input)
    expect(record).toMatchObject({
      toolId: 'copy', kind: 'write', effects: ['external', 'irreversible'], effectsLabel: 'external,irreversible',
      readOnly: false, domain: 'session-1', outcome: 'ok', status: 200, executed: true, dryRun: false,
    })
  })

  it('lists touched and mutated resources from the input', async () => {
    const { fromCatalog: [record] } = await recordsOf(copyTool(), input)
    expect([record!.touchedResources, record!.mutatedResources]).toEqual([['/a'], ['/b', '/c']])
  })

  it('lists [] when the resource functions throw', async () => {
    const thrower = () => { throw new Error('malformed') }
    const { fromCatalog: [record] } = await recordsOf(copyTool({ touchedResourcesOf: thrower, mutatedResourcesOf: thrower }), input)
    expect([record!.touchedResources, record!.mutatedResources]).toEqual([[], []])
  })

  it('lists [] when a resource function returns something other than strings', async () => {
    const { fromCatalog: [record] } = await recordsOf(copyTool({ touchedResourcesOf: () => [1, 2], mutatedResourcesOf: () => '/b' }), input)
    expect([record!.touchedResources, record!.mutatedResources]).toEqual([[], []])
  })

  it('carries the debugSteps output', async () => {
    const { fromCatalog: [record] } = await recordsOf(copyTool(), input)
    expect(record!.debugSteps).toEqual([{ name: 'copied', data: 1 }])
  })

  it('notes a throwing debugSteps as a step and still succeeds', async () => {
    const { fromCatalog: [record], result } = await recordsOf(copyTool({ debugSteps: () => { throw new Error('oops') } }), input)
    expect(record!.outcome).toBe('ok')
    expect(record!.debugSteps).toEqual([{ name: 'debugSteps failed', data: 'oops' }])
    expect((result as { value: unknown }).value).toEqual({ copied: 1 })
  })

  it('records a failed call with its outcome, status and code', async () => {
    const { fromCatalog: [record] } = await recordsOf(copyTool(), { read: 'not a list' })
    expect(record).toMatchObject({ outcome: 'invalid_input', status: 400, code: 'TOOLGATE_INVALID_INPUT', executed: false })
  })

  it('measures the call: execute time within the whole duration', async () => {
    const { fromCatalog: [record] } = await recordsOf(copyTool({ execute: async () => { await sleep(20); return { copied: 1 } } }), input)
    expect(record!.executeMs).toBeGreaterThanOrEqual(18)
    expect(record!.durationMs).toBeGreaterThanOrEqual(record!.executeMs)
  })

  it('is not made for an unknown tool', async () => {
    const seen: CallRecord[] = []
    const invoker = catalogOf([echoDeclaration()], { onRecord: r => seen.push(r) }).bind({ app: undefined })
    await rejectionOf(invoker.invoke({ toolId: 'nope', input: {} }))
    expect(seen).toEqual([])
  })

  it('does not fail the call when an observer throws', async () => {
    const invoker = catalogOf([echoDeclaration()], { onRecord: () => { throw new Error('sink down') } }).bind({ app: undefined })
    await expect(invoker.invoke({ toolId: 'echo', input: { text: 'a' } })).resolves.toMatchObject({ value: { text: 'a' } })
  })
})
