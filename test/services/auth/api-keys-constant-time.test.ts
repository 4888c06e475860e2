import * as crypto from 'node:crypto'
import { expect, it, vi } from 'vitest'
import { createApiKeyVerifier, hashApiKey } from '../../../src/services/auth/api-keys.js'

vi.mock('node:crypto', async importOriginal => {
  const actual = await importOriginal<typeof crypto>()
  return { ...actual, timingSafeEqual: vi.fn(actual.timingSafeEqual) }
})

it('compares the presented key with every stored digest, even after a match', () => {
  const keys = ['first', 'second', 'third'].map(name => ({ principal: name, sha256: hashApiKey(`${name}-key`), scopes: [] }))
  const verify = createApiKeyVerifier(keys)
  const timingSafeEqual = vi.mocked(crypto.timingSafeEqual)
  timingSafeEqual.mockClear()

  expect(verify('first-key')?.id).toBe('first')

  expect(timingSafeEqual).toHaveBeenCalledTimes(3)
  for (const [a, b] of timingSafeEqual.mock.calls) expect([(a as Buffer).length, (b as Buffer).length]).toEqual([32, 32])
})

it('a key that verified is not re-hashed on the next call; a wrong key is checked every time', () => {
  const verify = createApiKeyVerifier([{ principal: 'ci', sha256: hashApiKey('ci-key'), scopes: [] }])
  const timingSafeEqual = vi.mocked(crypto.timingSafeEqual)
  expect(verify('ci-key')?.id).toBe('ci')
  timingSafeEqual.mockClear()
  expect(verify('ci-key')?.id).toBe('ci')
  expect(timingSafeEqual).toHaveBeenCalledTimes(0)
  expect(verify('wrong-key')).toBeUndefined()
  expect(verify('wrong-key')).toBeUndefined()
  expect(timingSafeEqual).toHaveBeenCalledTimes(2)
})
