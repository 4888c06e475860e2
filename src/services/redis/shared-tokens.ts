import { createHash } from 'node:crypto'
import type { Redis } from 'ioredis'
import type { SharedTokens } from '../upstreams/credentials/token-cache.js'
import type { Token } from '../upstreams/credentials/token-endpoint.js'
import type { Sealer } from '../upstreams/credentials/sealer.js'

/*
 * Upstream tokens shared by the replicas on one Redis: each sealed (`Sealer`), under a key that
 * is a digest of what it is for (an upstream, a principal), expiring with the token; and the
 * right to fetch one, a `SET NX PX` claim, so replicas fetch one at a time.
 */

/** Delete the key only while it still holds this value: a newer token written meanwhile stays. */
const DROP_IF = 'if redis.call("GET", KEYS[1]) == ARGV[1] then return redis.call("DEL", KEYS[1]) end return 0'

export function sharedTokens (redis: Redis, prefix: string, sealer: Sealer): SharedTokens {
  const keyOf = (kind: 'token' | 'claim', key: string): string => `${prefix}credential:${kind}:${createHash('sha256').update(key).digest('base64url')}`
  // What each key holds now, sealed: a drop compares against it (sealing the same token twice gives two texts).
  const sealedOf = new Map<string, string>()
  return {
    async read (key) {
      const sealed = await redis.get(keyOf('token', key))
      if (sealed === null) return undefined
      const plain = await sealer.open(sealed)
      if (plain === undefined) return undefined
      const token = JSON.parse(plain) as Token
      sealedOf.set(key, sealed)
      if (sealedOf.size > 10_000) sealedOf.delete(sealedOf.keys().next().value!)
      return token
    },
    async claim (key, ms) {
      return await redis.set(keyOf('claim', key), '1', 'PX', ms, 'NX') === 'OK'
    },
    async write (key, token) {
      const ttl = Math.floor(token.expiresAt - Date.now())
      const sealed = await sealer.seal(JSON.stringify(token))
      if (ttl > 0) await redis.set(keyOf('token', key), sealed, 'PX', ttl)
      sealedOf.set(key, sealed)
      await redis.del(keyOf('claim', key))
    },
    async release (key) {
      await redis.del(keyOf('claim', key))
    },
    async remove (key) {
      await redis.del(keyOf('token', key))
      sealedOf.delete(key)
    },
    async drop (key, value) {
      const sealed = sealedOf.get(key)
      if (sealed === undefined) return
      const plain = await sealer.open(sealed)
      if (plain === undefined || (JSON.parse(plain) as Token).value !== value) return
      await redis.eval(DROP_IF, 1, keyOf('token', key), sealed)
      sealedOf.delete(key)
    },
  }
}
