import { randomFillSync } from 'node:crypto'
import type { IdGenerator } from '@opentelemetry/sdk-trace-node'

const POOL_BYTES = 4_096
const INVALID_TRACE_ID = '0'.repeat(32)
const INVALID_SPAN_ID = '0'.repeat(16)

/**
 * Trace and span ids as slices of the hex of a pooled CSPRNG buffer, refilled 4 KiB at a time
 * (as the request ids are, `core/ids.ts`), the pool's hex made at once: a slice of a string is
 * cheaper than a native call per id (a traced call takes three). The SDK's own generator writes
 * `Math.random()` into a buffer word by word for every span, sampled or not; that was a few
 * percent of a traced call. All-zero ids are invalid in W3C Trace Context: drawn again (odds
 * 2^-64 and 2^-128).
 */
export class PooledIdGenerator implements IdGenerator {
  readonly #pool = Buffer.allocUnsafe(POOL_BYTES)
  #hex = ''
  #offset = 0

  generateTraceId (): string {
    const id = this.#take(16)
    return id === INVALID_TRACE_ID ? this.generateTraceId() : id
  }

  generateSpanId (): string {
    const id = this.#take(8)
    return id === INVALID_SPAN_ID ? this.generateSpanId() : id
  }

  #take (bytes: number): string {
    const length = bytes * 2
    if (this.#offset + length > this.#hex.length) {
      this.#hex = randomFillSync(this.#pool).toString('hex')
      this.#offset = 0
    }
    const id = this.#hex.slice(this.#offset, this.#offset + length)
    this.#offset += length
    return id
  }
}
