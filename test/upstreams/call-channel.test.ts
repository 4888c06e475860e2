import { describe, expect, it } from 'vitest'
import { Client, InMemoryTransport, ProtocolError, SdkError, SdkErrorCode, type JSONRPCMessage } from '@modelcontextprotocol/client'
import { CallChannel, type ServerFault } from '../../src/services/upstreams/mcp/call-channel.js'

/*
 * The channel answers `tools/call` itself instead of the SDK client: it must take and refuse
 * exactly what the client does, on the same connection, against a server that answers raw
 * JSON-RPC (so it can send anything).
 */

interface Fake {
  readonly channel: CallChannel
  readonly client: Client
  readonly seen: JSONRPCMessage[]
  /** What the channel dropped of the server's messages. */
  readonly faults: ServerFault[]
  /** Sends as the server. */
  readonly send: (message: JSONRPCMessage) => Promise<void>
  /** What the next `tools/call` answers: a result, an error, or nothing at all. */
  answer: { result: unknown } | { error: { code: number, message: string } } | 'never'
}

async function connected (): Promise<Fake> {
  const [near, far] = InMemoryTransport.createLinkedPair()
  const faults: ServerFault[] = []
  const fake: Fake = { faults, channel: new CallChannel(near, fault => { faults.push(fault) }), client: new Client({ name: 'test', version: '1.0.0' }, { versionNegotiation: { mode: 'legacy' } }), seen: [], send: async message => { await far.send(message) }, answer: { result: { content: [] } } }
  far.onmessage = message => {
    fake.seen.push(message)
    const { id, method } = message as { id?: string | number, method?: string }
    if (id === undefined) return
    if (method === 'initialize') void far.send({ jsonrpc: '2.0', id, result: { protocolVersion: '2025-11-25', capabilities: { tools: {} }, serverInfo: { name: 'fake', version: '1.0.0' } } })
    else if (method === 'tools/list') void far.send({ jsonrpc: '2.0', id, result: { tools: [{ name: 't', inputSchema: { type: 'object' } }] } })
    else if (method === 'tools/call' && fake.answer !== 'never') void far.send({ jsonrpc: '2.0', id, ...fake.answer } as JSONRPCMessage)
  }
  await far.start()
  await fake.client.connect(fake.channel)
  expect(fake.client.getProtocolEra()).toBe('legacy')
  return fake
}

type Verdict = { ok: unknown } | { failed: string }
const verdict = async (calling: Promise<unknown>): Promise<Verdict> => {
  try {
    return { ok: await calling }
  } catch (error) {
    if (error instanceof SdkError) return { failed: `sdk ${error.code}` }
    if (error instanceof ProtocolError) return { failed: `protocol ${error.code} ${error.message}` }
    return { failed: String(error) }
  }
}

const RESULTS: unknown[] = [
  { content: [{ type: 'text', text: 'hi' }] },
  {},
  { structuredContent: { n: 1 } },
  { content: [{ type: 'text', text: 'x' }], structuredContent: { n: 1 }, isError: false, _meta: { a: 1 }, extra: true },
  { content: [{ type: 'text', text: 'no' }], isError: true },
  { content: [{ type: 'text', text: 'x' }], resultType: 'complete' },
  { content: [{ type: 'image', data: 'AAAA', mimeType: 'image/png' }, { type: 'resource_link', uri: 'file:///a', name: 'a' }] },
  { content: 'not a list of blocks' },
  { content: [{ type: 'text' }] },
  { content: [{ type: 'image', mimeType: 'image/png' }] },
  { content: [{ type: 'nonsense' }] },
  { content: [], isError: 'yes' },
  { content: [], structuredContent: 'a string' },
  { content: [], structuredContent: [1, 2] },
  { task: { taskId: 'x' } },
  { requestState: 'abc' },
]

describe('CallChannel', () => {
  it('takes and refuses every result exactly as the SDK client does, with the same value', async () => {
    const fake = await connected()
    for (const result of RESULTS) {
      fake.answer = { result }
      const ours = await verdict(fake.channel.callTool({ name: 't', arguments: {} }, { signal: new AbortController().signal }))
      const theirs = await verdict(fake.client.callTool({ name: 't', arguments: {} }))
      expect(ours, JSON.stringify(result)).toEqual(theirs)
    }
    await fake.client.close()
  })

  it('refuses a result that is no object at once, where the SDK client does not recognise the answer and waits', async () => {
    const fake = await connected()
    for (const result of ['a string', null, []]) {
      fake.answer = { result }
      expect(await verdict(fake.channel.callTool({ name: 't', arguments: {} }, { signal: new AbortController().signal }))).toEqual({ failed: 'sdk INVALID_RESULT' })
      expect(await verdict(fake.client.callTool({ name: 't', arguments: {} }, { timeout: 50 }))).toEqual({ failed: 'sdk REQUEST_TIMEOUT' })
    }
    await fake.client.close()
  })

  it('answers a JSON-RPC error as the ProtocolError the SDK client throws', async () => {
    const fake = await connected()
    fake.answer = { error: { code: -32602, message: 'unknown tool' } }
    const ours = await verdict(fake.channel.callTool({ name: 't', arguments: {} }, { signal: new AbortController().signal }))
    expect(ours).toEqual(await verdict(fake.client.callTool({ name: 't', arguments: {} })))
    expect(ours).toMatchObject({ failed: expect.stringContaining('protocol -32602') })
    await fake.client.close()
  })

  it('an abort rejects with its reason and sends notifications/cancelled for that request', async () => {
    const fake = await connected()
    fake.answer = 'never'
    const abort = new AbortController()
    const calling = fake.channel.callTool({ name: 't', arguments: {} }, { signal: abort.signal })
    abort.abort(new Error('timed out'))
    await expect(calling).rejects.toThrow('timed out')
    await new Promise(resolve => setImmediate(resolve))
    const call = fake.seen.find(message => (message as { method?: string }).method === 'tools/call') as { id: string }
    expect(fake.seen.at(-1)).toMatchObject({ method: 'notifications/cancelled', params: { requestId: call.id } })
    await fake.client.close()
  })

  it('listens through onAbort when the call has one, never making its signal', async () => {
    const fake = await connected()
    fake.answer = 'never'
    let abort: ((reason: Error) => void) | undefined
    const call = { get signal (): AbortSignal { throw new Error('the signal was read') }, onAbort: (listener: (reason: Error) => void) => { abort = listener; return () => { abort = undefined } } }
    const calling = fake.channel.callTool({ name: 't', arguments: {} }, call)
    abort!(new Error('cancelled'))
    await expect(calling).rejects.toThrow('cancelled')
    expect(abort).toBeUndefined()
    await new Promise(resolve => setImmediate(resolve))
    expect(fake.seen.at(-1)).toMatchObject({ method: 'notifications/cancelled' })
    fake.answer = { result: { content: [] } }
    expect(await fake.channel.callTool({ name: 't', arguments: {} }, call)).toEqual({ content: [] })
    expect(abort).toBeUndefined()
    await fake.client.close()
  })

  it('a transport that closes fails the calls in flight as a lost connection', async () => {
    const fake = await connected()
    fake.answer = 'never'
    const calling = fake.channel.callTool({ name: 't', arguments: {} }, { signal: new AbortController().signal })
    await fake.client.close()
    await expect(calling).rejects.toSatisfy(error => SdkError.isInstance(error) && error.code === SdkErrorCode.ConnectionClosed)
  })

  it('passes every other message to the client: its own calls still work beside ours', async () => {
    const fake = await connected()
    const [listed, called] = await Promise.all([fake.client.listTools(), fake.channel.callTool({ name: 't', arguments: {} }, { signal: new AbortController().signal })])
    expect(listed.tools.map(tool => tool.name)).toEqual(['t'])
    expect(called).toEqual({ content: [] })
    await fake.client.close()
  })

  it('asks for progress only for a call that listens, hands on its well-formed notifications, and keeps them all from the client, reporting what it drops', async () => {
    const fake = await connected()
    const clientErrors: Error[] = []
    fake.client.onerror = error => { clientErrors.push(error) }
    await fake.channel.callTool({ name: 't', arguments: {} }, { signal: new AbortController().signal })
    expect(fake.seen.at(-1)).not.toHaveProperty('params._meta.progressToken')

    fake.answer = 'never'
    const heard: unknown[] = []
    const calling = fake.channel.callTool({ name: 't', arguments: {} }, { signal: new AbortController().signal, onProgress: update => { heard.push(update) } })
    const sent = fake.seen.at(-1) as { id: string, params: { _meta: { progressToken: string } } }
    expect(sent.params._meta.progressToken).toBe(sent.id)
    const note = (params: Record<string, unknown>): JSONRPCMessage => ({ jsonrpc: '2.0', method: 'notifications/progress', params: { progressToken: sent.id, ...params } })
    await fake.send(note({ progress: 1, total: 2, message: 'half', extra: true }))
    await fake.send(note({ progress: 'lots' }))
    await fake.send(note({ progress: 2, total: 'two' }))
    await fake.send({ jsonrpc: '2.0', method: 'notifications/progress', params: { progressToken: 'tg-999', progress: 1 } })
    await fake.send({ jsonrpc: '2.0', id: sent.id, result: { content: [] } })
    expect(await calling).toEqual({ content: [] })
    await fake.send(note({ progress: 3 }))
    await new Promise(resolve => setImmediate(resolve))
    expect(heard).toEqual([{ progress: 1, total: 2, message: 'half' }])
    expect(clientErrors).toEqual([])
    expect(fake.faults).toEqual(['malformed progress', 'malformed progress', 'progress for no call in flight', 'progress for no call in flight'])
    await fake.client.close()
  })
})
