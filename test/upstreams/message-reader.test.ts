import { describe, expect, it } from 'vitest'
import { ReadBuffer } from '@modelcontextprotocol/client'
import { MessageReader } from '../../src/services/upstreams/mcp/message-reader.js'

/* The reader takes the answers to calls without the SDK's schema: it must read every line as the SDK's ReadBuffer does. */

type Read = { message: unknown } | { threw: true } | { none: true }
function readOne (reader: { append (chunk: Buffer): void, readMessage (): unknown }, line: string): Read {
  try {
    reader.append(Buffer.from(line))
    const message = reader.readMessage()
    return message === null ? { none: true } : { message }
  } catch {
    return { threw: true }
  }
}

const LINES = [
  '{"jsonrpc":"2.0","id":"tg-1","result":{"content":[{"type":"text","text":"hi"}]}}\n',
  '{"jsonrpc":"2.0","id":7,"result":{}}\r\n',
  '{"jsonrpc":"2.0","id":7,"result":{"_meta":{"a":1},"content":[]}}\n',
  '{"jsonrpc":"2.0","id":7,"result":{"content":[]},"extra":1}\n',
  '{"jsonrpc":"1.0","id":7,"result":{}}\n',
  '{"jsonrpc":"2.0","id":7.5,"result":{}}\n',
  '{"jsonrpc":"2.0","id":null,"result":{}}\n',
  '{"jsonrpc":"2.0","id":7,"result":[]}\n',
  '{"jsonrpc":"2.0","id":7,"result":"x"}\n',
  '{"jsonrpc":"2.0","id":7,"__proto__":{"x":1},"result":{}}\n',
  '{"jsonrpc":"2.0","id":7,"error":{"code":-32601,"message":"no"}}\n',
  '{"jsonrpc":"2.0","method":"notifications/tools/list_changed"}\n',
  '{"jsonrpc":"2.0","id":3,"method":"roots/list"}\n',
  '{"hello":"this is no JSON-RPC message"}\n',
  'starting work...\n',
  '[1,2]\n',
]

describe('MessageReader', () => {
  it('reads, skips and refuses every line as the SDK ReadBuffer does', () => {
    for (const line of LINES) {
      expect(readOne(new MessageReader(1024), line), line).toEqual(readOne(new ReadBuffer({ maxBufferSize: 1024 }), line))
    }
  })

  it('splits messages across chunks and several in one chunk, and bounds what waits', () => {
    const reader = new MessageReader(128)
    reader.append(Buffer.from('{"jsonrpc":"2.0","id":1,"res'))
    expect(reader.readMessage()).toBeNull()
    reader.append(Buffer.from('ult":{}}\n{"jsonrpc":"2.0","id":2,"result":{}}\n'))
    expect(reader.readMessage()).toEqual({ jsonrpc: '2.0', id: 1, result: {} })
    expect(reader.readMessage()).toEqual({ jsonrpc: '2.0', id: 2, result: {} })
    expect(reader.readMessage()).toBeNull()
    // Past the bound a line is dropped as it comes; at its end, with no request to answer, it throws.
    reader.append(Buffer.alloc(129, 'x'))
    expect(reader.readMessage()).toBeNull()
    expect(() => { reader.append(Buffer.from('x\n')) }).toThrow(/maximum size/)
  })

  it('drops an answer longer than the bound and answers its request alone with an error, then reads on', () => {
    const big = 'x'.repeat(5_000)
    const sdkStyle = `{"result":{"contents":[{"uri":"a","text":"${big}"}]},"jsonrpc":"2.0","id":7}\n`
    const idFirst = `{"jsonrpc":"2.0","id":"tg-3","result":{"text":"${big}"}}\r\n`
    const next = '{"jsonrpc":"2.0","id":8,"result":{}}\n'
    for (const [line, id] of [[sdkStyle, 7], [idFirst, 'tg-3']] as const) {
      // In one chunk, and in chunks of 100 bytes (the line is dropped as it comes, never held whole).
      for (const size of [line.length + next.length, 100]) {
        const reader = new MessageReader(1024)
        const bytes = Buffer.from(line + next)
        const read: unknown[] = []
        for (let at = 0; at < bytes.length; at += size) {
          reader.append(bytes.subarray(at, at + size))
          for (let message = reader.readMessage(); message !== null; message = reader.readMessage()) read.push(message)
        }
        expect(read).toEqual([
          { jsonrpc: '2.0', id, error: { code: -32603, message: expect.stringContaining('larger than the gateway\'s limit of 1024 bytes') } },
          { jsonrpc: '2.0', id: 8, result: {} },
        ])
      }
    }
  })

  it('refuses an oversized line whose request cannot be told', () => {
    const reader = new MessageReader(1024)
    reader.append(Buffer.from(`{"jsonrpc":"2.0","result":{"id":1,"text":"${'x'.repeat(5_000)}"},"note":1}\n`))
    expect(() => reader.readMessage()).toThrow('exceeded the maximum size of 1024 bytes')
  })
})
