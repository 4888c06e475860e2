import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import { z } from 'zod'
import { defineToolCatalog, MemoryIdempotencyStore } from '../../src/index.js'

const TTL = 1_000
const KIB = 1024

/** A money-moving tool that counts its runs, so a second run is visible. */
function transfers (store: MemoryIdempotencyStore) {
  const runs = new Map<string, number>()
  const catalog = defineToolCatalog([{
    id: 'transfer', kind: 'write', description: 'Move money.', isReadOnly: false, isConcurrencySafe: true,
    inputSchema: z.object({ id: z.string(), pad: z.string().optional() }), outputSchema: z.object({ id: z.string(), pad: z.string().optional() }),
    authorize () {},
    execute: (input: { id: string, pad?: string }) => { runs.set(input.id, (runs.get(input.id) ?? 0) + 1); return input },
  }], { idempotency: { store, ttlMs: TTL } })
  const as = (principal: string) => catalog.bind({ app: undefined, idempotencyScope: principal })
  return { runs, as }
}

const rejection = (promise: Promise<unknown>): Promise<{ code: string, status: number, extensions: Record<string, unknown> }> =>
  promise.then(() => { throw new Error('expected a rejection') }, (error: { code: string, status: number, extensions: Record<string, unknown> }) => error)

describe('idempotency store shares', () => {
  it("one principal flooding new keys cannot evict another principal's record: the victim's retry replays, the transfer ran once", async () => {
    const store = new MemoryIdempotencyStore({ maxBytes: 64 * KIB, maxBytesPerOwner: 16 * KIB })
    const { runs, as } = transfers(store)
    await as('victim').invoke({ toolId: 'transfer', input: { id: 'rent' }, idempotencyKey: 'pay-rent' })
    let refused
    for (let i = 0; i < 1_000 && refused === undefined; i++) {
      await as('flood').invoke({ toolId: 'transfer', input: { id: `f${i}` }, idempotencyKey: `k${i}` }).catch((error: unknown) => { refused = error })
    }
    expect(refused).toMatchObject({ code: 'TOOLGATE_IDEMPOTENCY_QUOTA', status: 429 })
    expect(store.bytes('flood')).toBeLessThanOrEqual(16 * KIB)
    const retry = await as('victim').invoke({ toolId: 'transfer', input: { id: 'rent' }, idempotencyKey: 'pay-rent' })
    expect(retry.replayed).toBe(true)
    expect(runs.get('rent')).toBe(1)
    // The victim's own share is untouched by the flood.
    expect((await as('victim').invoke({ toolId: 'transfer', input: { id: 'more' }, idempotencyKey: 'another' })).replayed).toBe(false)
  })

  it('a refused key never runs, says when to retry, and a retry of a stored key still replays while the share is full', async () => {
    const store = new MemoryIdempotencyStore({ maxBytes: 64 * KIB, maxBytesPerOwner: 4 * KIB })
    const { runs, as } = transfers(store)
    await as('p').invoke({ toolId: 'transfer', input: { id: 'big', pad: 'x'.repeat(4 * KIB) }, idempotencyKey: 'big' })
    const error = await rejection(as('p').invoke({ toolId: 'transfer', input: { id: 'next' }, idempotencyKey: 'next' }))
    expect(error).toMatchObject({ code: 'TOOLGATE_IDEMPOTENCY_QUOTA', status: 429 })
    expect(error.extensions.retryAfter).toBeGreaterThanOrEqual(1)
    expect(runs.get('next')).toBeUndefined()
    expect((await as('p').invoke({ toolId: 'transfer', input: { id: 'big', pad: 'x'.repeat(4 * KIB) }, idempotencyKey: 'big' })).replayed).toBe(true)
    // Calls without a key are not limited by the store at all.
    expect((await as('p').invoke({ toolId: 'transfer', input: { id: 'keyless' } })).replayed).toBe(false)
  })

  it('counts bytes, not records: one stored 1 MiB answer fills a 1 MiB share', async () => {
    const store = new MemoryIdempotencyStore({ maxBytes: 64 * 1024 * KIB, maxBytesPerOwner: 1024 * KIB })
    const { as } = transfers(store)
    await as('p').invoke({ toolId: 'transfer', input: { id: 'a', pad: 'x'.repeat(1024 * KIB) }, idempotencyKey: 'a' })
    expect(store.bytes('p')).toBeGreaterThan(1024 * KIB)
    expect(store.bytes()).toBe(store.bytes('p'))
    expect(await rejection(as('p').invoke({ toolId: 'transfer', input: { id: 'b' }, idempotencyKey: 'b' }))).toMatchObject({ status: 429 })
  })

  it("the whole store full answers 503 for everyone's new keys, still evicting nothing", async () => {
    const store = new MemoryIdempotencyStore({ maxBytes: 4 * KIB, maxBytesPerOwner: 4 * KIB })
    const { as } = transfers(store)
    await as('a').invoke({ toolId: 'transfer', input: { id: 'a', pad: 'x'.repeat(4 * KIB) }, idempotencyKey: 'a' })
    expect(await rejection(as('b').invoke({ toolId: 'transfer', input: { id: 'b' }, idempotencyKey: 'b' }))).toMatchObject({ code: 'TOOLGATE_STORE_UNAVAILABLE', status: 503 })
    expect((await as('a').invoke({ toolId: 'transfer', input: { id: 'a', pad: 'x'.repeat(4 * KIB) }, idempotencyKey: 'a' })).replayed).toBe(true)
  })

  it('frees a share when its records expire', async () => {
    let now = 0
    const store = new MemoryIdempotencyStore({ maxBytes: 64 * KIB, maxBytesPerOwner: 4 * KIB, now: () => now })
    await store.claim('k1', 'f', TTL, 'p')
    await store.complete('k1', 'f', { type: 'value', value: 'x'.repeat(4 * KIB) }, TTL, 'p')
    expect(await store.claim('k2', 'f', TTL, 'p')).toMatchObject({ state: 'full', scope: 'owner', retryAfterMs: TTL })
    now = TTL
    expect(await store.claim('k2', 'f', TTL, 'p')).toEqual({ state: 'claimed' })
    expect(store.size).toBe(1)
  })

  it('property: whatever any owners do, a completed record is found, unchanged, until its TTL ends; bytes stay within bounds plus answers of calls in flight', async () => {
    const op = fc.record({ owner: fc.constantFrom('a', 'b', 'c'), key: fc.integer({ min: 0, max: 30 }), size: fc.integer({ min: 0, max: 3_000 }), advance: fc.integer({ min: 0, max: 300 }) })
    await fc.assert(fc.asyncProperty(fc.array(op, { maxLength: 80 }), async ops => {
      let now = 0
      const maxBytes = 12 * KIB
      const store = new MemoryIdempotencyStore({ maxBytes, maxBytesPerOwner: 6 * KIB, maxEntries: 20, now: () => now })
      const stored = new Map<string, { value: string, expiresAt: number }>()
      for (const { owner, key, size, advance } of ops) {
        now += advance
        const storeKey = `${owner}|${key}`
        const claim = await store.claim(storeKey, 'f', TTL, owner)
        const known = stored.get(storeKey)
        if (known !== undefined && known.expiresAt > now) {
          // The safety property: a live record is never forgotten nor replaced.
          expect(claim).toMatchObject({ state: 'done', result: { type: 'value', value: known.value } })
          continue
        }
        if (claim.state !== 'claimed') continue
        const value = 'v'.repeat(size)
        await store.complete(storeKey, 'f', { type: 'value', value }, TTL, owner)
        stored.set(storeKey, { value, expiresAt: now + TTL })
        // Only the answer just stored may overshoot (it ran; it must be kept).
        expect(store.bytes()).toBeLessThanOrEqual(maxBytes + 2 * size + 512)
      }
    }), { numRuns: 200 })
  })
})
