import { hash, timingSafeEqual } from 'node:crypto'
import type { Principal } from '../../core/app-context.js'
import { ConfigError, type Config } from '../config.js'

/** One configured API key: its principal, scopes and the SHA-256 hex digest of the key. */
export type ApiKey = Config['apiKeys'][number]

/** The SHA-256 hex digest of an API key, the form `API_KEYS` stores. */
export function hashApiKey (key: string): string {
  return hash('sha256', key, 'hex')
}

const VERIFIED_CACHE_SIZE = 1024

interface StoredKey {
  readonly digest: Buffer
  readonly principal: Principal
}

/**
 * Build the lookup of presented API keys. The presented key is hashed first, so every
 * comparison is between two 32-byte digests: `timingSafeEqual` never sees unequal lengths, and
 * the presented key's length changes nothing but the hashing time. Every stored digest is
 * compared on every call, so the time taken does not tell which entry matched.
 *
 * @example
 * const verify = createApiKeyVerifier([{ principal: 'ci', sha256: hashApiKey('s3cret'), scopes: ['tools:read'] }])
 * verify('s3cret')?.id // 'ci'
 * verify('guess')      // undefined
 */
export function createApiKeyVerifier (keys: readonly ApiKey[]): (presentedKey: string) => Principal | undefined {
  const stored = keys.map(storedKey)
  rejectSharedKeys(keys)
  // Keys that verified recently, so a busy client is not re-hashed on every call (under load
  // the hash measured ~10 us a request, far above its cost in isolation). Only successes are
  // kept, so a flood of wrong keys cannot fill it; it is bounded; keys never change at run
  // time, so nothing in it goes stale. A presented key still in the cache is matched by a Map
  // lookup, which reveals nothing about other keys' digests.
  const verified = new Map<string, Principal>()
  return presentedKey => {
    const known = verified.get(presentedKey)
    if (known !== undefined) return known
    // One-shot hashing: a Hash object costs microseconds to set up, on every call.
    const digest = hash('sha256', presentedKey, 'buffer')
    let match: Principal | undefined
    for (const entry of stored) {
      const equal = timingSafeEqual(digest, entry.digest)
      match = equal ? entry.principal : match
    }
    if (match !== undefined) {
      if (verified.size >= VERIFIED_CACHE_SIZE) verified.delete(verified.keys().next().value!)
      verified.set(presentedKey, match)
    }
    return match
  }
}

function storedKey (key: ApiKey): StoredKey {
  const digest = Buffer.from(key.sha256, 'hex')
  if (digest.length !== 32) throw new ConfigError(`invalid setting "apiKeys": the key of "${key.principal}" is not a SHA-256 hex digest`)
  const principal: Principal = Object.freeze({ id: key.principal, scopes: Object.freeze([...key.scopes]), via: 'api-key' })
  return { digest, principal }
}

/** One key naming two principals would make the caller's identity depend on list order. */
function rejectSharedKeys (keys: readonly ApiKey[]): void {
  const owners = new Map<string, string>()
  for (const key of keys) {
    const digest = key.sha256.toLowerCase()
    const owner = owners.get(digest)
    if (owner !== undefined && owner !== key.principal) {
      throw new ConfigError(`invalid setting "apiKeys": principals "${owner}" and "${key.principal}" share one key`)
    }
    owners.set(digest, key.principal)
  }
}
