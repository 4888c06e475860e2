import { parseJSONRPCMessage, type JSONRPCMessage } from '@modelcontextprotocol/client'

/*
 * A child's stdout as JSON-RPC messages, one per line, read as the SDK's ReadBuffer reads
 * them: a line that is not JSON is skipped, a JSON line that is no JSON-RPC message throws.
 * The answer to a call, by far the most common line, is recognised by hand when it is exactly
 * what the SDK's schema accepts without rewriting (`jsonrpc`, `id`, an object `result` without
 * `_meta`, nothing else); every other line goes through that schema. A zod union tried on every
 * answer cost more than the rest of reading it.
 *
 * A line longer than `maxBytes` is not kept: its bytes are dropped as they come, and when it
 * ends, an answer whose id can be read at its start or its end (where JSON-RPC writers put it)
 * becomes an error answer to that request alone, so one oversized answer (a large resource)
 * fails its call and the connection carries on. A line whose id cannot be found throws, as
 * before: what it answered cannot be told.
 */
export class MessageReader {
  readonly #maxBytes: number
  #buffer: Buffer | undefined
  /** The oversized line being dropped: its first and (so far) last bytes, where an id may be. */
  #skipping: { head: string, tail: Buffer } | undefined
  /** An error answer made for an oversized line, waiting to be read. */
  #made: JSONRPCMessage | undefined

  constructor (maxBytes: number) {
    this.#maxBytes = maxBytes
  }

  append (chunk: Buffer): void {
    if (this.#skipping !== undefined) {
      const newline = chunk.indexOf(10)
      if (newline === -1) {
        this.#skipping.tail = lastBytes(this.#skipping.tail, chunk)
        return
      }
      this.#made = this.#oversized(this.#skipping.head, lastBytes(this.#skipping.tail, chunk.subarray(0, newline)))
      this.#skipping = undefined
      chunk = chunk.subarray(newline + 1)
      if (chunk.length === 0) return
    }
    this.#buffer = this.#buffer === undefined ? chunk : Buffer.concat([this.#buffer, chunk])
  }

  /** The next whole message, or null until more arrives. */
  readMessage (): JSONRPCMessage | null {
    if (this.#made !== undefined) {
      const made = this.#made
      this.#made = undefined
      return made
    }
    while (this.#buffer !== undefined) {
      const newline = this.#buffer.indexOf(10)
      if (newline === -1) {
        // A partial line already past the bound: dropped from here on, its ends kept.
        if (this.#buffer.length > this.#maxBytes) {
          this.#skipping = { head: this.#buffer.toString('utf8', 0, EDGE_BYTES), tail: this.#buffer.subarray(-EDGE_BYTES) }
          this.#buffer = undefined
        }
        return null
      }
      const end = newline > 0 && this.#buffer[newline - 1] === 13 ? newline - 1 : newline
      if (end > this.#maxBytes) {
        const made = this.#oversized(this.#buffer.toString('utf8', 0, EDGE_BYTES), this.#buffer.subarray(Math.max(0, end - EDGE_BYTES), end))
        this.#buffer = newline + 1 === this.#buffer.length ? undefined : this.#buffer.subarray(newline + 1)
        return made
      }
      const line = this.#buffer.toString('utf8', 0, end)
      this.#buffer = newline + 1 === this.#buffer.length ? undefined : this.#buffer.subarray(newline + 1)
      let value: unknown
      try {
        value = JSON.parse(line)
      } catch {
        continue
      }
      return isPlainAnswer(value) ? value : parseJSONRPCMessage(value)
    }
    return null
  }

  clear (): void {
    this.#buffer = undefined
    this.#skipping = undefined
    this.#made = undefined
  }

  /** The error answer for an oversized line, or a throw when its request cannot be told. */
  #oversized (head: string, tail: Buffer): JSONRPCMessage {
    const id = idAtStart(head) ?? idAtEnd(tail.toString('utf8').replace(/\r$/, ''))
    if (id === undefined) throw new Error(`a message exceeded the maximum size of ${this.#maxBytes} bytes`)
    return { jsonrpc: '2.0', id, error: { code: -32603, message: `the answer was larger than the gateway's limit of ${this.#maxBytes} bytes (MAX_RESPONSE_BYTES) and was dropped` } }
  }
}

/** How much of each end of an oversized line is kept to find its id. */
const EDGE_BYTES = 256
const ID = String.raw`(-?\d{1,15}|"(?:[^"\\]|\\.){0,200}")`
/** `{"jsonrpc":"2.0","id":…` or `{"id":…`, as most writers start an answer. */
const ID_AT_START = new RegExp(String.raw`^\s*\{\s*(?:"jsonrpc"\s*:\s*"2\.0"\s*,\s*)?"id"\s*:\s*` + ID + String.raw`\s*,`)
/** `…,"jsonrpc":"2.0","id":…}` or `…,"id":…}`, as the official SDKs end one (fields in the order set). */
const ID_AT_END = new RegExp(String.raw`,\s*"id"\s*:\s*` + ID + String.raw`\s*(?:,\s*"jsonrpc"\s*:\s*"2\.0"\s*)?\}\s*$`)

function idAtStart (head: string): string | number | undefined {
  return idOf(ID_AT_START.exec(head)?.[1])
}

function idAtEnd (tail: string): string | number | undefined {
  return idOf(ID_AT_END.exec(tail)?.[1])
}

function idOf (text: string | undefined): string | number | undefined {
  if (text === undefined) return undefined
  try {
    const id: unknown = JSON.parse(text)
    return typeof id === 'string' || Number.isSafeInteger(id) ? id as string | number : undefined
  } catch {
    return undefined
  }
}

function lastBytes (kept: Buffer, more: Buffer): Buffer {
  if (more.length >= EDGE_BYTES) return more.subarray(-EDGE_BYTES)
  return Buffer.concat([kept, more]).subarray(-EDGE_BYTES)
}

/** `{ jsonrpc: '2.0', id, result }` with an object result that has no `_meta`: the schema would take it as it is. */
function isPlainAnswer (value: unknown): value is JSONRPCMessage {
  if (!isObject(value)) return false
  let keys = 0
  for (const key in value) {
    if (key !== 'jsonrpc' && key !== 'id' && key !== 'result') return false
    keys++
  }
  const { jsonrpc, id, result } = value as { jsonrpc?: unknown, id?: unknown, result?: unknown }
  return keys === 3 && jsonrpc === '2.0' && (typeof id === 'string' || Number.isSafeInteger(id)) && isObject(result) && !Object.hasOwn(result, '_meta')
}

function isObject (value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value)
}
