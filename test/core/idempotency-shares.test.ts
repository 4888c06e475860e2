import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import { MemoryIdempotencyStore } from '../../src/index.js'
import { FIRST_RECORDS, reserveOf } from '../../src/core/idempotency/shares.js'

const TTL = 60_000

describe('records are shared fairly between principals (IDEMPOTENCY_MAX_ENTRIES)', () => {
  it('principals filling their shares leave the reserve: one holding nothing stores its first records, then is refused like the rest', async () => {
    const store = new MemoryIdempotencyStore({ maxEntries: 800, maxEntriesPerOwner: 200 })
    const fill = async (owner: string): Promise<number> => {
      let n = 0
      while ((await store.claim(`${owner}-${n}`, 'f', TTL, owner)).state === 'claimed') n++
      return n
    }
    // Three take their whole share; the fourth meets the reserve (the last eighth) first.
    expect([await fill('a'), await fill('b'), await fill('c')]).toEqual([200, 200, 200])
    expect(await fill('d')).toBe(800 - reserveOf(800) - 600)
    expect(await store.claim('d-more', 'f', TTL, 'd')).toMatchObject({ state: 'full', scope: 'store' })
    for (let i = 0; i < FIRST_RECORDS; i++) expect(await store.claim(`new-${i}`, 'f', TTL, 'newcomer')).toEqual({ state: 'claimed' })
    expect(await store.claim('new-next', 'f', TTL, 'newcomer')).toMatchObject({ state: 'full', scope: 'store' })
    expect(store.entries('newcomer')).toBe(FIRST_RECORDS)
  })

  it('for any traffic, no principal holds more than its share, and one holding nothing is refused only when the whole store is full', async () => {
    await fc.assert(fc.asyncProperty(
      fc.array(fc.record({ owner: fc.integer({ min: 0, max: 40 }), release: fc.boolean() }), { maxLength: 600 }),
      async steps => {
        const store = new MemoryIdempotencyStore({ maxEntries: 160, maxEntriesPerOwner: 50 })
        const held = new Map<number, string[]>()
        let n = 0
        for (const { owner, release } of steps) {
          const mine = held.get(owner) ?? []
          if (release && mine.length > 0) {
            await store.release(mine.pop()!)
            continue
          }
          const key = `k${n++}`
          const claim = await store.claim(key, 'f', TTL, String(owner))
          if (claim.state === 'claimed') held.set(owner, [...mine, key])
          else if (mine.length === 0) expect(store.entries()).toBe(160)
          expect(store.entries(String(owner))).toBeLessThanOrEqual(50)
        }
      },
    ), { numRuns: 100 })
  })
})
