import { createHash } from 'node:crypto'
import { jose } from '../../auth/jose.js'
import { ConfigError } from '../../config.js'

/*
 * Credentials at rest (in Redis, shared by replicas) are sealed with an authenticated cipher:
 * JWE compact, direct key agreement, A256GCM (by jose), under a key from the environment. The
 * first key seals; every key listed opens, so a key is rotated by putting the new one first
 * and dropping the old one once what it sealed has expired. A sealed value names its key
 * (`kid`, a digest of it, never the key).
 */

export class Sealer {
  readonly #keys: ReadonlyArray<{ readonly id: string, readonly key: Uint8Array }>

  constructor (keys: readonly Uint8Array[]) {
    this.#keys = keys.map(key => ({ id: createHash('sha256').update(key).digest('base64url').slice(0, 12), key }))
  }

  /** `CREDENTIALS_KEY`: 32-byte keys in base64 or base64url, comma-separated, the sealing one first. */
  static fromSetting (text: string, setting = 'CREDENTIALS_KEY'): Sealer {
    const keys = text.split(',').map(part => part.trim()).filter(part => part !== '').map((part, index) => {
      const key = Buffer.from(part.replaceAll('-', '+').replaceAll('_', '/'), 'base64')
      if (key.length !== 32) throw new ConfigError(`invalid setting "${setting}": key ${index + 1} is ${key.length} bytes once decoded; each key is 32 random bytes in base64 (\`openssl rand -base64 32\`)`)
      return new Uint8Array(key)
    })
    if (keys.length === 0) throw new ConfigError(`invalid setting "${setting}": no key`)
    return new Sealer(keys)
  }

  async seal (plain: string): Promise<string> {
    const { CompactEncrypt } = await jose()
    const { id, key } = this.#keys[0]!
    return await new CompactEncrypt(new TextEncoder().encode(plain)).setProtectedHeader({ alg: 'dir', enc: 'A256GCM', kid: id }).encrypt(key)
  }

  /** The plain text, or undefined when no key of ours opens it (a retired key, or tampered with). */
  async open (sealed: string): Promise<string | undefined> {
    const { compactDecrypt, decodeProtectedHeader } = await jose()
    let kid: unknown
    try {
      kid = decodeProtectedHeader(sealed).kid
    } catch {
      return undefined
    }
    const entry = this.#keys.find(({ id }) => id === kid)
    if (entry === undefined) return undefined
    try {
      const { plaintext } = await compactDecrypt(sealed, entry.key, { keyManagementAlgorithms: ['dir'], contentEncryptionAlgorithms: ['A256GCM'] })
      return new TextDecoder().decode(plaintext)
    } catch {
      return undefined
    }
  }
}
