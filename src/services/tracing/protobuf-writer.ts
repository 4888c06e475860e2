import type { HrTime } from '@opentelemetry/api'

/*
 * A protobuf writer for the OTLP serializer (`otlp-protobuf.ts`): varints, fixed-width numbers,
 * strings, ids from their hex and length-delimited fields, into a buffer that grows.
 */

/** Each ASCII code's value as a hex digit (0 for what is not one). */
const HEX = new Uint8Array(128)
for (let digit = 0; digit < 16; digit++) {
  HEX['0123456789abcdef'.charCodeAt(digit)] = digit
  HEX['0123456789ABCDEF'.charCodeAt(digit)] = digit
}

/**
 * A protobuf writer. A length-delimited field reserves one byte for its length and moves its
 * contents when the length needs more: most of a span's fields are under 128 bytes.
 */
export class Encoder {
  #buf: Buffer
  #pos = 0

  /** Writes into `buf`, and into a larger one of its own when that is full. */
  constructor (buf: Buffer) {
    this.#buf = buf
  }

  /** Bytes written so far. */
  get length (): number {
    return this.#pos
  }

  /** What was written, in the writer's own buffer: valid until the next write or `reset`. */
  written (): Buffer {
    return this.#buf.subarray(0, this.#pos)
  }

  /** Write from the start again; a buffer that grew past `keep` bytes is let go for one of `fresh`. */
  reset (keep: number, fresh: number): void {
    this.#pos = 0
    if (this.#buf.length > keep) this.#buf = Buffer.allocUnsafe(fresh)
  }

  /** A copy of what was written, in a buffer of its own. */
  finish (): Uint8Array {
    const bytes = Buffer.allocUnsafeSlow(this.#pos)
    this.#buf.copy(bytes, 0, 0, this.#pos)
    return bytes
  }

  #room (bytes: number): void {
    if (this.#pos + bytes <= this.#buf.length) return
    let size = this.#buf.length * 2
    while (size < this.#pos + bytes) size *= 2
    const grown = Buffer.allocUnsafe(size)
    this.#buf.copy(grown, 0, 0, this.#pos)
    this.#buf = grown
  }

  tag (field: number, wire: number): void {
    const tag = (field << 3) | wire
    if (tag >= 0x80) {
      this.varint(tag)
      return
    }
    this.#room(1)
    this.#buf[this.#pos++] = tag
  }

  /** A non-negative integer, or a negative one as its 64-bit two's complement (ten bytes). */
  varint (value: number): void {
    this.#room(10)
    const buf = this.#buf
    if (value >= 0 && value <= 0xffffffff) {
      let v = value >>> 0
      while (v > 0x7f) {
        buf[this.#pos++] = (v & 0x7f) | 0x80
        v >>>= 7
      }
      buf[this.#pos++] = v
      return
    }
    let [low, high] = split64(value)
    while (high > 0 || low > 0x7f) {
      buf[this.#pos++] = (low & 0x7f) | 0x80
      low = ((low >>> 7) | (high << 25)) >>> 0
      high >>>= 7
    }
    buf[this.#pos++] = low
  }

  fixed32 (value: number): void {
    this.#room(4)
    this.#uint32(value >>> 0)
  }

  #uint32 (v: number): void {
    const buf = this.#buf
    buf[this.#pos++] = v & 0xff
    buf[this.#pos++] = (v >>> 8) & 0xff
    buf[this.#pos++] = (v >>> 16) & 0xff
    buf[this.#pos++] = v >>> 24
  }

  double (value: number): void {
    this.#room(8)
    this.#buf.writeDoubleLE(value, this.#pos)
    this.#pos += 8
  }

  /** An HrTime as unsigned nanoseconds since the epoch, split so that no product passes 2^53. */
  time ([seconds, nanos]: HrTime): void {
    const fromLow = (seconds & 0xffff) * 1e9
    const fromHigh = ((seconds / 0x10000) >>> 0) * 1e9
    const low = (fromLow >>> 0) + (((fromHigh & 0xffff) * 0x10000) >>> 0) + nanos
    const high = Math.floor(fromLow / 0x100000000) + ((fromHigh / 0x10000) >>> 0) + Math.floor(low / 0x100000000)
    this.#room(8)
    this.#uint32(low >>> 0)
    this.#uint32(high >>> 0)
  }

  /** A string field (wire type 2). */
  field (field: number, value: string): void {
    this.tag(field, 2)
    this.string(value)
  }

  /** A copy of what was written from `start` on. */
  since (start: number): Uint8Array {
    return new Uint8Array(this.#buf.subarray(start, this.#pos))
  }

  copy (bytes: Uint8Array): void {
    this.#room(bytes.length)
    this.#buf.set(bytes, this.#pos)
    this.#pos += bytes.length
  }

  /** Length and UTF-8; a short ASCII string (most keys and values) by hand, the rest natively. */
  string (value: string): void {
    const length = value.length
    if (length < 0x80) {
      this.#room(length + 1)
      const buf = this.#buf
      const start = this.#pos
      let pos = start + 1
      let i = 0
      for (; i < length; i++) {
        const code = value.charCodeAt(i)
        if (code > 0x7f) break
        buf[pos++] = code
      }
      if (i === length) {
        buf[start] = length
        this.#pos = pos
        return
      }
    }
    const bytes = Buffer.byteLength(value, 'utf8')
    this.varint(bytes)
    this.#room(bytes)
    this.#pos += this.#buf.write(value, this.#pos, bytes, 'utf8')
  }

  bytes (value: Uint8Array): void {
    this.varint(value.length)
    this.copy(value)
  }

  /** A trace or span id: its length and the bytes its hex spells. */
  hex (id: string): void {
    const length = id.length >>> 1
    this.varint(length)
    this.#room(length)
    const buf = this.#buf
    let pos = this.#pos
    // By hand: Buffer's hex decoding is a native call dearer than the 8 or 16 bytes of an id.
    // (Ids come from the SDK, always hex; a digit that is not reads as 0.)
    for (let i = 0; i < length * 2; i += 2) buf[pos++] = (HEX[id.charCodeAt(i)]! << 4) | HEX[id.charCodeAt(i + 1)]!
    this.#pos = pos
  }

  /** Reserve a length-delimited field's length byte: `end` fills it in. */
  begin (): number {
    this.#room(1)
    return this.#pos++
  }

  end (start: number): void {
    const length = this.#pos - start - 1
    if (length < 0x80) {
      this.#buf[start] = length
      return
    }
    let size = 2
    while (length >= 2 ** (7 * size)) size++
    this.#room(size - 1)
    this.#buf.copyWithin(start + size, start + 1, this.#pos)
    this.#pos += size - 1
    let v = length
    for (let at = start; at < start + size - 1; at++) {
      this.#buf[at] = (v & 0x7f) | 0x80
      v >>>= 7
    }
    this.#buf[start + size - 1] = v
  }
}

/** A 64-bit integer's [low, high] 32-bit halves, two's complement for a negative one. */
function split64 (value: number): [number, number] {
  const magnitude = Math.abs(value)
  let low = magnitude >>> 0
  let high = (magnitude / 0x100000000) >>> 0
  if (value < 0) {
    low = ~low >>> 0
    high = ~high >>> 0
    low = (low + 1) >>> 0
    if (low === 0) high = (high + 1) >>> 0
  }
  return [low, high]
}
