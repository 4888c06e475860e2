import { parseJSONRPCMessage, type JSONRPCMessage } from '@modelcontextprotocol/client'

/*
 * A child's stdout as JSON-RPC messages, one per line, read as the SDK's ReadBuffer reads
 * them: a line that is not JSON is skipped, a JSON line that is no JSON-RPC message throws,
 * more than `maxBytes` waiting throws. The answer to a call, by far the most common line, is
 * recognised by hand when it is exactly what the SDK's schema accepts without rewriting
 * (`jsonrpc`, `id`, an object `result` without `_meta`, nothing else); every other line goes
 * through that schema. A zod union tried on every answer cost more than the rest of reading it.
 */
export class MessageReader {
  readonly #maxBytes: number
  #buffer: Buffer | undefined

  constructor (maxBytes: number) {
    this.#maxBytes = maxBytes
  }

  append (chunk: Buffer): void {
    if ((this.#buffer?.length ?? 0) + chunk.length > this.#maxBytes) {
      this.clear()
      throw new Error(`ReadBuffer exceeded maximum size of ${this.#maxBytes} bytes`)
    }
    this.#buffer = this.#buffer === undefined ? chunk : Buffer.concat([this.#buffer, chunk])
  }

  /** The next whole message, or null until more arrives. */
  readMessage (): JSONRPCMessage | null {
    while (this.#buffer !== undefined) {
      const newline = this.#buffer.indexOf(10)
      if (newline === -1) return null
      const end = newline > 0 && this.#buffer[newline - 1] === 13 ? newline - 1 : newline
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
  }
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
