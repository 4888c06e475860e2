import { lineBytesAtMost, sealLine, writeUnsealed, type ChainHead } from './chain.js'

/**
 * A buffer a pending line grows past is replaced by one twice as large; one larger than this is
 * not kept once its lines are written, so a burst does not hold its memory for good.
 */
const KEPT_BYTES = 4 * 2 ** 20
const FIRST_BYTES = 64 * 2 ** 10

/**
 * Lines waiting for their write, already encoded: each entry is written into one buffer when it
 * is appended (`writeUnsealed`), and the whole batch is chained in place (`seal`) and handed to
 * the write as one slice of that buffer. The numbering is fixed at `push`: line `i` of a batch
 * sealed after head `h` must have been pushed as `h.seq + 1 + i` (the writer numbers its queue so).
 */
export class PendingLines {
  #buffer = Buffer.allocUnsafe(0)
  #at = 0
  /** Where each line starts; it ends where the next starts, the last at `#at`. */
  #starts: number[] = []

  get length (): number {
    return this.#starts.length
  }

  /** Raw bytes ahead of every line; only while empty. */
  prefix (text: string): void {
    if (this.#at !== 0) throw new Error('a prefix goes before the first line')
    this.#room(3 * text.length)
    this.#at = this.#buffer.write(text, 0, 'utf8')
  }

  push (seq: number, fields: string): void {
    this.#room(lineBytesAtMost(fields))
    this.#starts.push(this.#at)
    this.#at = writeUnsealed(this.#buffer, this.#at, seq, fields)
  }

  /** Chain every line after `head`, in place; the bytes to write (valid until `clear`) and the head after them. */
  seal (head: ChainHead): { bytes: Buffer, head: ChainHead } {
    const starts = this.#starts
    let { seq, hash } = head
    for (let i = 0; i < starts.length; i++) {
      seq++
      hash = sealLine(this.#buffer, starts[i]!, i + 1 < starts.length ? starts[i + 1]! : this.#at, seq, hash)
    }
    return { bytes: this.#buffer.subarray(0, this.#at), head: { seq, hash } }
  }

  /** Empty, for the next batch (after its bytes were written: they share the buffer). */
  clear (): void {
    this.#at = 0
    this.#starts = []
    if (this.#buffer.length > KEPT_BYTES) this.#buffer = Buffer.allocUnsafe(0)
  }

  #room (bytes: number): void {
    if (this.#buffer.length - this.#at >= bytes) return
    const grown = Buffer.allocUnsafe(Math.max(this.#at + bytes, 2 * this.#buffer.length, FIRST_BYTES))
    this.#buffer.copy(grown, 0, 0, this.#at)
    this.#buffer = grown
  }
}
