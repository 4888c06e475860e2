import { randomFillSync } from 'node:crypto'

const ID_BYTES = 16
const POOL_BYTES = ID_BYTES * 256
const pool = Buffer.allocUnsafe(POOL_BYTES)
let offset = POOL_BYTES

/**
 * A new unique id: 32 lowercase hex characters, 128 bits from the CSPRNG (the shape of a W3C
 * Trace Context trace-id). Request and call ids are made on every call: this costs about a
 * third of `randomUUID()` once the string is used, since the native hex encoding yields a flat
 * string where the UUID's is built by concatenation (and flattened again when it becomes a
 * header). Random bytes are drawn 4 KiB at a time.
 */
export function newId (): string {
  if (offset === POOL_BYTES) {
    randomFillSync(pool)
    offset = 0
  }
  const id = pool.toString('hex', offset, offset + ID_BYTES)
  offset += ID_BYTES
  return id
}
