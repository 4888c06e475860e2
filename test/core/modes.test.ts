import { describe, expect, it } from 'vitest'
import { z } from 'zod'
import type { BindOptions } from '../../src/core/catalog.js'
import { ToolError } from '../../src/core/errors.js'
import { catalogOf, echoDeclaration, rejectionOf, writeDeclaration, type LooseDeclaration } from './helpers.js'

/** A tool that counts its authorize and execute runs and remembers the ctx execute saw. */
function counted (declaration: LooseDeclaration) {
  const counts = { authorize: 0, execute: 0, escalated: undefined as boolean | undefined }
  const tool = {
    ...declaration,
    authorize () { counts.authorize++ },
    execute (input: unknown, ctx: { escalated: boolean }) { counts.execute++; counts.escalated = ctx.escalated; return input },
  }
  const invoker = (bind: Partial<BindOptions<undefined>> = {}) => catalogOf([tool]).bind({ app: undefined, ...bind })
  return { counts, invoker }
}

const moveTool = writeDeclaration('move', () => {}, {
  inputSchema: z.object({ from: z.string(), to: z.string(), overwrite: z.boolean().default(false) }),
  resolve: (input: { from: string, to: string }) => `would move ${input.from} to ${input.to}`,
})

describe('dry run', () => {
  it('returns resolve(input) and executes nothing', async () => {
    const { counts, invoker } = counted(moveTool)
    const { value } = await invoker().invoke({ toolId: 'move', input: { from: 'a', to: 'b' }, dryRun: true })
    expect(value).toBe('would move a to b')
    expect(counts.execute).toBe(0)
  })

  it('still runs authorize', async () => {
    const { counts, invoker } = counted(moveTool)
    await invoker().invoke({ toolId: 'move', input: { from: 'a', to: 'b' }, dryRun: true })
    expect(counts.authorize).toBe(1)
  })

  it('returns the normalised input, defaults applied, when the tool has no resolve', async () => {
    const { resolve: _none, ...withoutResolve } = moveTool
    const { counts, invoker } = counted(withoutResolve)
    const { value, record } = await invoker().invoke({ toolId: 'move', input: { from: 'a', to: 'b', junk: 1 }, dryRun: true })
    expect(value).toEqual({ from: 'a', to: 'b', overwrite: false })
    expect([counts.execute, record.outcome, record.dryRun]).toEqual([0, 'dry_run', true])
  })

  it('fails with TOOLGATE_DRY_RUN_REJECTED when resolve throws', async () => {
    const { counts, invoker } = counted({ ...moveTool, resolve: () => { throw new Error('target exists') } })
    const error = await rejectionOf(invoker().invoke({ toolId: 'move', input: { from: 'a', to: 'b' }, dryRun: true }))
    expect([error.code, error.status, error.message]).toEqual(['TOOLGATE_DRY_RUN_REJECTED', 422, 'target exists'])
    expect(counts.execute).toBe(0)
  })

  it('passes a ToolError thrown by resolve through', async () => {
    const { invoker } = counted({ ...moveTool, resolve: () => { throw new ToolError(409, 'TARGET_EXISTS', 'b exists') } })
    const error = await rejectionOf(invoker().invoke({ toolId: 'move', input: { from: 'a', to: 'b' }, dryRun: true }))
    expect([error.status, error.code]).toEqual([409, 'TARGET_EXISTS'])
  })

  it('still validates the input first', async () => {
    const { counts, invoker } = counted(moveTool)
    const error = await rejectionOf(invoker().invoke({ toolId: 'move', input: { from: 'a' }, dryRun: true }))
    expect([error.code, counts.authorize]).toEqual(['TOOLGATE_INVALID_INPUT', 0])
  })
})

describe('plan mode', () => {
  it('refuses a tool that is not read-only with TOOLGATE_PLAN_MODE (403) and runs nothing', async () => {
    const { counts, invoker } = counted(moveTool)
    const error = await rejectionOf(invoker({ mode: 'plan' }).invoke({ toolId: 'move', input: { from: 'a', to: 'b' } }))
    expect([error.code, error.status]).toEqual(['TOOLGATE_PLAN_MODE', 403])
    expect([counts.authorize, counts.execute]).toEqual([0, 0])
  })

  it('allows a read-only tool', async () => {
    const { counts, invoker } = counted(echoDeclaration())
    const { value } = await invoker({ mode: 'plan' }).invoke({ toolId: 'echo', input: { text: 'a' } })
    expect([value, counts.execute]).toEqual([{ text: 'a' }, 1])
  })

  it('allows a read-only tool that is not concurrency-safe', async () => {
    const { counts, invoker } = counted(echoDeclaration({ isConcurrencySafe: false }))
    await invoker({ mode: 'plan' }).invoke({ toolId: 'echo', input: { text: 'a' } })
    expect(counts.execute).toBe(1)
  })

  it('refuses a dry run of a non-read-only tool too', async () => {
    const { invoker } = counted(moveTool)
    const error = await rejectionOf(invoker({ mode: 'plan' }).invoke({ toolId: 'move', input: { from: 'a', to: 'b' }, dryRun: true }))
    expect(error.code).toBe('TOOLGATE_PLAN_MODE')
  })
})

describe('escalation', () => {
  const escalating = { ...moveTool, supportsEscalation: true }
  const input = { from: 'a', to: 'b' }

  it('is refused with TOOLGATE_ESCALATION_UNSUPPORTED (400) for a tool without supportsEscalation', async () => {
    const { counts, invoker } = counted(moveTool)
    const error = await rejectionOf(invoker({ escalationApproved: true }).invoke({ toolId: 'move', input, escalate: true }))
    expect([error.code, error.status, counts.execute]).toEqual(['TOOLGATE_ESCALATION_UNSUPPORTED', 400, 0])
  })

  it('without the binding\'s approval asks a person: a pending approval, authorize ran, execute did not', async () => {
    const { counts, invoker } = counted(escalating)
    const result = await invoker().invoke({ toolId: 'move', input, escalate: true })
    expect(result.approval).toMatchObject({ status: 'pending', escalate: true, reasons: ['escalation'], tool: 'move' })
    expect(result.value).toBe(result.approval)
    expect([result.record.outcome, result.record.status, counts.authorize, counts.execute]).toEqual(['approval_pending', 202, 1, 0])
  })

  it('asks a person when the binding\'s approval is truthy but not true', async () => {
    const { counts, invoker } = counted(escalating)
    const result = await invoker({ escalationApproved: 'yes' as unknown as boolean }).invoke({ toolId: 'move', input, escalate: true })
    expect([result.approval?.status, counts.execute]).toEqual(['pending', 0])
  })

  it('runs with ctx.escalated true when the binding approves', async () => {
    const { counts, invoker } = counted(escalating)
    const { record } = await invoker({ escalationApproved: true }).invoke({ toolId: 'move', input, escalate: true })
    expect([counts.execute, counts.escalated, record.escalated]).toEqual([1, true, true])
  })

  it('runs with ctx.escalated false when the call does not ask, approval or not', async () => {
    const { counts, invoker } = counted(escalating)
    await invoker({ escalationApproved: true }).invoke({ toolId: 'move', input })
    expect(counts.escalated).toBe(false)
  })
})
