import type { KeyedStore } from '../../keyed-store.js'
import type { Sealer } from './sealer.js'

/**
 * A keyed store whose values are sealed before they leave the process (people's links, their
 * refresh tokens, and the flows that make them, in Redis). A value no key of ours opens (a
 * retired key, tampered with) reads as absent: the person links again.
 */
export class SealedKeyedStore implements KeyedStore {
  constructor (readonly inner: KeyedStore, readonly sealer: Sealer) {}

  async get (id: string): Promise<unknown> {
    const sealed = await this.inner.get(id)
    if (typeof sealed !== 'string') return undefined
    const plain = await this.sealer.open(sealed)
    return plain === undefined ? undefined : JSON.parse(plain)
  }

  async set (id: string, value: unknown, ttlMs: number): Promise<void> {
    await this.inner.set(id, await this.sealer.seal(JSON.stringify(value)), ttlMs)
  }

  async setIfAbsent (id: string, value: unknown, ttlMs: number): Promise<boolean> {
    return await this.inner.setIfAbsent(id, await this.sealer.seal(JSON.stringify(value)), ttlMs)
  }

  async delete (id: string): Promise<void> {
    await this.inner.delete(id)
  }
}
