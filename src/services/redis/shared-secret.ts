import type { Redis } from 'ioredis'

/**
 * A secret every replica on this Redis agrees on: the first to ask stores its candidate (SET NX),
 * everyone reads what is stored. Asked again later, a replica offers the secret it holds, so if
 * Redis lost the key (it keeps nothing on disk here) the replicas converge on one again.
 */
export async function sharedSecret (redis: Redis, key: string, candidate: Buffer): Promise<Buffer> {
  await redis.set(key, candidate.toString('base64'), 'NX')
  const stored = await redis.get(key)
  if (stored === null) throw new Error(`the shared secret ${key} vanished as it was read`)
  return Buffer.from(stored, 'base64')
}
