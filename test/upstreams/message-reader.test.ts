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
    expect(() => { reader.append(Buffer.alloc(129, 'x')) }).toThrow(/maximum size/)
  })
})
