import { describe, expect, it } from 'vitest'
import { newId } from '../../src/core/ids.js'

describe('newId', () => {
  it('is 32 lowercase hex characters', () => {
    for (let i = 0; i < 1000; i++) expect(newId()).toMatch(/^[0-9a-f]{32}$/)
  })

  it('never repeats over many pool refills (200k ids)', () => {
    const seen = new Set<string>()
    for (let i = 0; i < 200_000; i++) seen.add(newId())
    expect(seen.size).toBe(200_000)
  })
})
