import { createHash } from 'node:crypto'
import type { Redis } from 'ioredis'
import type { KeptToken, SharedTokens } from '../upstreams/credentials/token-cache.js'
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
  const opened = async (sealed: string | null): Promise<KeptToken | undefined> => {
    if (sealed === null) return undefined
    const plain = await sealer.open(sealed)
    return plain === undefined ? undefined : JSON.parse(plain) as KeptToken
  }
  return {
    async read (key) {
      return await opened(await redis.get(keyOf('token', key)))
    },
    async claim (key, ms) {
      return await redis.set(keyOf('claim', key), '1', 'PX', ms, 'NX') === 'OK'
    },
    async write (key, token) {
      const ttl = Math.floor(token.expiresAt - Date.now())
      if (ttl > 0) await redis.set(keyOf('token', key), await sealer.seal(JSON.stringify(token)), 'PX', ttl)
      await redis.del(keyOf('claim', key))
    },
    async release (key) {
      await redis.del(keyOf('claim', key))
    },
    async remove (key) {
      await redis.del(keyOf('token', key))
    },
    async drop (key, value) {
      // Read what is there now: only that token, if it is still the refused one, is deleted.
      const sealed = await redis.get(keyOf('token', key))
      if ((await opened(sealed))?.value !== value) return
      await redis.eval(DROP_IF, 1, keyOf('token', key), sealed!)
    },
  }
}
