import { describe, expect, it } from 'vitest'
import { z } from 'zod'
import { defineTool, defineToolCatalog, MemoryIdempotencyStore, type AnyTool, type IdempotencyStore, type ToolContext } from '../../src/index.js'
import { fingerprintOf } from '../../src/core/idempotency/fingerprint.js'

interface App { allowed: boolean }

function slowWriter (settleAfterMs: number) {
  const state = { runs: 0, effects: 0 }
  const catalog = defineToolCatalog<App>([defineTool({
    id: 'slow_write', kind: 'write', description: 'Writes slowly and ignores its signal.', isReadOnly: false, isConcurrencySafe: false,
    timeoutMs: 50, inputSchema: z.object({ v: z.number() }), outputSchema: z.object({ v: z.number() }),
    authorize (_input, ctx: ToolContext<App>) { if (!ctx.app.allowed) throw new Error('access revoked') },
    execute: async ({ v }) => {
      state.runs++
      await new Promise(resolve => setTimeout(resolve, settleAfterMs))
      state.effects++
      return { v }
    },
  }) as AnyTool<App>], { core: { abandonGraceMs: 10_000 } })
  return { state, catalog }
}

const rejection = (promise: Promise<unknown>): Promise<{ code: string, status: number }> =>
  promise.then(() => { throw new Error('expected a rejection') }, (error: { code: string, status: number }) => error)

describe('idempotency in the core', () => {
  it('outcome unknown: the key stays claimed (409) until the tool settles, then replays its real result; one execution', async () => {
    const { state, catalog } = slowWriter(250)
    const tools = catalog.bind({ app: { allowed: true } })
    const call = () => tools.invoke({ toolId: 'slow_write', input: { v: 1 }, idempotencyKey: 'k' })
    const timedOut = await rejection(call())
    expect(timedOut).toMatchObject({ code: 'TOOLGATE_TIMEOUT', status: 504 })
    expect(await rejection(call())).toMatchObject({ code: 'TOOLGATE_CONFLICT', status: 409 })
    await new Promise(resolve => setTimeout(resolve, 300))
    const replay = await call()
    expect(replay).toMatchObject({ value: { v: 1 }, replayed: true })
    expect(replay.record.outcome).toBe('replayed')
    expect(state.runs).toBe(1)
    expect(state.effects).toBe(1)
  })

  it('authorize runs before any replay: a caller who lost access gets no stored result', async () => {
    const { catalog } = slowWriter(0)
    expect((await catalog.bind({ app: { allowed: true } }).invoke({ toolId: 'slow_write', input: { v: 2 }, idempotencyKey: 'k' })).value).toEqual({ v: 2 })
    expect(await rejection(catalog.bind({ app: { allowed: false } }).invoke({ toolId: 'slow_write', input: { v: 2 }, idempotencyKey: 'k' })))
      .toMatchObject({ code: 'TOOLGATE_DENIED', status: 403 })
  })

  it('a store that cannot be reached fails the call closed with 503, and nothing runs', async () => {
    const broken: IdempotencyStore = {
      claim: async () => { throw new Error('connection refused') },
      complete: async () => {},
      release: async () => {},
    }
    let runs = 0
    const catalog = defineToolCatalog([{
      id: 'w', kind: 'write', description: 'Write.', isReadOnly: false, isConcurrencySafe: false,
      inputSchema: z.object({}), outputSchema: z.null(), authorize () {}, execute: () => { runs++; return null },
    }], { idempotency: { store: broken } })
    const tools = catalog.bind({ app: undefined })
    expect(await rejection(tools.invoke({ toolId: 'w', input: {}, idempotencyKey: 'k' }))).toMatchObject({ code: 'TOOLGATE_STORE_UNAVAILABLE', status: 503 })
    expect((await tools.invoke({ toolId: 'w', input: {} })).value).toBeNull()
    expect(runs).toBe(1)
  })

  it('the fingerprint ignores key order and tells inputs apart', () => {
    expect(fingerprintOf({ a: 1, b: { c: [1, 2], d: 'x' } })).toBe(fingerprintOf({ b: { d: 'x', c: [1, 2] }, a: 1 }))
    expect(fingerprintOf({ a: 1 })).not.toBe(fingerprintOf({ a: 2 }))
  })

  it('the memory store expires records after their TTL and stays bounded by refusing new keys, never by evicting a live record', async () => {
    let now = 0
    const store = new MemoryIdempotencyStore({ maxEntries: 2, now: () => now })
    expect(await store.claim('a', 'f', 100)).toEqual({ state: 'claimed' })
    await store.complete('a', 'f', { type: 'value', value: 1 }, 100)
    expect(await store.claim('b', 'f', 100)).toEqual({ state: 'claimed' })
    expect(await store.claim('c', 'f', 100)).toMatchObject({ state: 'full', scope: 'store' }) // neither done "a" nor running "b" goes
    expect(await store.claim('b', 'f', 100)).toEqual({ state: 'running', fingerprint: 'f' })
    expect(await store.claim('a', 'f', 100)).toMatchObject({ state: 'done', result: { type: 'value', value: 1 } })
    now = 1000
    expect(await store.claim('b', 'g', 100)).toEqual({ state: 'claimed' })
    expect(await store.claim('c', 'f', 100)).toEqual({ state: 'claimed' })
  })
})
