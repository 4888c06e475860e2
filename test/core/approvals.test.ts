import { describe, expect, it } from 'vitest'
import { defineTool } from '../../src/core/define-tool.js'
import { ToolDefinitionError } from '../../src/core/errors.js'
import { MemoryApprovalStore } from '../../src/core/approvals/memory-store.js'
import { catalogOf, echoDeclaration, rejectionOf, writeDeclaration } from './helpers.js'

/* The approval step without HTTP: what asks for approval, and what an approved call does. */

function counting (requiresApproval: unknown) {
  const counts = { execute: 0 }
  const tool = writeDeclaration('act', () => { counts.execute++; return 'done' }, { requiresApproval, resolve: () => 'would act' })
  return { counts, tool }
}

describe('what asks for approval', () => {
  it('a predicate that throws, or answers anything but false, asks (fails closed)', async () => {
    for (const requiresApproval of [() => { throw new Error('bug') }, () => undefined, () => 'no', true]) {
      const { counts, tool } = counting(requiresApproval)
      const result = await catalogOf([tool]).bind({ app: undefined }).invoke({ toolId: 'act', input: {} })
      expect([result.approval?.status, result.record.outcome, counts.execute]).toEqual(['pending', 'approval_pending', 0])
    }
  })

  it('false, or a predicate answering false, runs at once', async () => {
    for (const requiresApproval of [false, () => false, undefined]) {
      const { counts, tool } = counting(requiresApproval)
      const result = await catalogOf([tool]).bind({ app: undefined }).invoke({ toolId: 'act', input: {} })
      expect([result.approval, result.value, counts.execute]).toEqual([undefined, 'done', 1])
    }
  })

  it('a dry run executes nothing, so it needs no approval', async () => {
    const { tool } = counting(true)
    const result = await catalogOf([tool]).bind({ app: undefined }).invoke({ toolId: 'act', input: {}, dryRun: true })
    expect([result.approval, result.value]).toEqual([undefined, 'would act'])
  })

  it('defineTool refuses a requiresApproval that is neither boolean nor function', () => {
    expect(() => defineTool(echoDeclaration({ requiresApproval: 'yes' }) as never)).toThrow(ToolDefinitionError)
    expect(() => defineTool(echoDeclaration({ requiresApproval: 'yes' }) as never)).toThrow(/requiresApproval/)
  })

  it('an operator rule of the binding asks, with its approvers', async () => {
    const catalog = catalogOf([echoDeclaration()])
    const result = await catalog.bind({ app: undefined, requester: 'agent', approvalRule: () => ({ approvers: ['cfo'] }) }).invoke({ toolId: 'echo', input: { text: 'a' } })
    expect(result.approval).toMatchObject({ reasons: ['rule'], approvers: ['cfo'], requestedBy: 'agent', input: { text: 'a' } })
  })
})

describe('an approved call', () => {
  it('refused before execute (queue full) gives its approval back, and runs once when retried', async () => {
    let release!: () => void
    const block = writeDeclaration('block', async () => { await new Promise<void>(resolve => { release = resolve }); return 'released' })
    const { counts, tool } = counting(true)
    const store = new MemoryApprovalStore()
    const catalog = catalogOf([block, tool], { core: { maxQueuePerDomain: 0 }, approvals: { store } })
    const agent = catalog.bind({ app: undefined, requester: 'agent', domain: 'd' })
    const { approval } = await agent.invoke({ toolId: 'act', input: {} })
    await catalog.approvals.decide(approval!.id, { id: 'approver' }, 'approved')
    const blocking = agent.invoke({ toolId: 'block', input: {} })
    const refused = await rejectionOf(agent.invoke({ toolId: 'act', input: {}, approvalId: approval!.id }))
    expect([refused.code, counts.execute, (await store.get(approval!.id))?.status]).toEqual(['TOOLGATE_QUEUE_FULL', 0, 'approved'])
    release()
    await blocking
    expect((await agent.invoke({ toolId: 'act', input: {}, approvalId: approval!.id })).value).toBe('done')
    expect((await agent.invoke({ toolId: 'act', input: {}, approvalId: approval!.id })).replayed).toBe(true)
    expect([counts.execute, (await store.get(approval!.id))?.status]).toEqual([1, 'consumed'])
  })

  it('self-approval is refused unless the catalog allows it', async () => {
    const { tool } = counting(true)
    for (const allowSelfApproval of [false, true]) {
      const catalog = catalogOf([tool], { approvals: { allowSelfApproval } })
      const { approval } = await catalog.bind({ app: undefined, requester: 'me' }).invoke({ toolId: 'act', input: {} })
      const deciding = catalog.approvals.decide(approval!.id, { id: 'me' }, 'approved')
      if (allowSelfApproval) await expect(deciding).resolves.toMatchObject({ status: 'approved' })
      else expect((await rejectionOf(deciding)).code).toBe('TOOLGATE_SELF_APPROVAL')
    }
  })
})

describe('the in-memory approval store', () => {
  const limits = { maxPendingPerPrincipal: 2, maxPendingTotal: 3 }
  const request = (id: string, requestedBy: string, requestedAt = 0) => ({
    id, tool: 't', kind: 'write', effects: [], effectsLabel: 'none', inputDigest: 'd', input: {}, escalate: false,
    reasons: ['tool' as const], requestedBy, approvers: [], requestedAt,
  })

  it('bounds pending approvals per principal and in total; settling one frees its slot', async () => {
    const store = new MemoryApprovalStore({ now: () => 0 })
    expect(await store.create(request('a1', 'a'), 100, limits)).toBe('created')
    expect(await store.create(request('a2', 'a'), 100, limits)).toBe('created')
    expect(await store.create(request('a3', 'a'), 100, limits)).toBe('principal_full')
    expect(await store.create(request('b1', 'b'), 100, limits)).toBe('created')
    expect(await store.create(request('c1', 'c'), 100, limits)).toBe('full')
    await store.decide('a1', { status: 'rejected', decidedBy: 'x', decidedAt: 0, useBy: 100 })
    expect(await store.create(request('c1', 'c'), 100, limits)).toBe('created')
    expect(await store.pendingCount()).toBe(3)
  })

  it('one principal filling the pending approvals leaves the reserve to principals with none waiting', async () => {
    const store = new MemoryApprovalStore({ now: () => 0 })
    // A share as large as the room: only the reserve (the last eighth, 2 of 16) stops one principal.
    const wide = { maxPendingPerPrincipal: 16, maxPendingTotal: 16 }
    for (let i = 0; i < 14; i++) expect(await store.create(request(`a${i}`, 'a'), 100, wide)).toBe('created')
    expect(await store.create(request('a14', 'a'), 100, wide)).toBe('full')
    expect(await store.create(request('b1', 'b'), 100, wide)).toBe('created')
    // b now holds one: the rest of the reserve is for others.
    expect(await store.create(request('b2', 'b'), 100, wide)).toBe('full')
    expect(await store.create(request('c1', 'c'), 100, wide)).toBe('created')
    expect(await store.create(request('d1', 'd'), 100, wide)).toBe('full')
  })

  it('expires pending approvals once, consumes an approval once, and forgets settled ones after retainMs', async () => {
    let now = 0
    const store = new MemoryApprovalStore({ now: () => now, retainMs: 1_000 })
    await store.create(request('late', 'a'), 100, limits)
    await store.create(request('ok', 'a'), 100, limits)
    await store.decide('ok', { status: 'approved', decidedBy: 'x', decidedAt: 50, useBy: 500 })
    now = 200
    expect((await store.sweepExpired(now)).map(r => [r.id, r.status])).toEqual([['late', 'expired']])
    expect(await store.sweepExpired(now)).toEqual([])
    expect(await store.decide('late', { status: 'approved', decidedBy: 'x', decidedAt: now, useBy: 900 })).toMatchObject({ type: 'not_pending' })
    expect(await Promise.all([store.consume('ok', now), store.consume('ok', now)])).toEqual(['consumed', 'not_approved'])
    now = 1_199
    expect((await store.get('late'))?.status).toBe('expired')
    now = 2_000
    expect([await store.get('late'), await store.get('ok')]).toEqual([undefined, undefined])
  })
})

describe('an approval store that cannot be reached', () => {
  it('fails closed: 503 TOOLGATE_STORE_UNAVAILABLE, nothing runs', async () => {
    const down = async (): Promise<never> => { throw new Error('connection refused') }
    const store = { create: down, get: down, listPending: down, decide: down, consume: down, unconsume: down, replaceContinuation: down, sweepExpired: down, pendingCount: down }
    const { counts, tool } = counting(true)
    const agent = catalogOf([tool], { approvals: { store } }).bind({ app: undefined })
    for (const request of [{ toolId: 'act', input: {} }, { toolId: 'act', input: {}, approvalId: 'a'.repeat(32) }]) {
      const error = await rejectionOf(agent.invoke(request))
      expect([error.code, error.status]).toEqual(['TOOLGATE_STORE_UNAVAILABLE', 503])
    }
    expect(counts.execute).toBe(0)
  })
})

describe('where nobody can decide an approval', () => {
  it('a call that needs one is refused at once with the reason, opens no approval and runs nothing; one that needs none runs', async () => {
    const store = new MemoryApprovalStore()
    const { counts, tool } = counting(true)
    const plain = counting(false)
    const catalog = catalogOf([tool], { approvals: { store, undecidable: 'no one is there' } })
    const refusal = await rejectionOf(catalog.bind({ app: undefined }).invoke({ toolId: 'act', input: {} }))
    expect(refusal).toMatchObject({ status: 403, code: 'TOOLGATE_APPROVAL_UNDECIDABLE', message: expect.stringContaining('no one is there') })
    expect([counts.execute, await store.pendingCount()]).toEqual([0, 0])
    const other = catalogOf([plain.tool], { approvals: { store, undecidable: 'no one is there' } })
    expect((await other.bind({ app: undefined }).invoke({ toolId: 'act', input: {} })).value).toBe('done')
  })
})
