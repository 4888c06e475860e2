import { createInterface } from 'node:readline'
import type { Readable, Writable } from 'node:stream'
import type { CancelSignal } from '../../core/abort.js'
import { Cancellations } from './cancellations.js'
import { classify, errorText, JSON_RPC, type JsonRpcId } from './json-rpc.js'
import { envelopeVersionOf, MODERN_VERSIONS } from './modern.js'
import type { McpAnswer, McpCaller, McpProtocol } from './protocol.js'

export interface StdioOptions {
  readonly protocol: McpProtocol
  readonly input: Readable
  readonly output: Writable
  /** The caller of one request; `cancelled` aborts its tool call on `notifications/cancelled`. */
  readonly callerOf: (cancelled: CancelSignal | undefined) => McpCaller
  /** Told of a request that failed outside the protocol (a bug): it still gets an answer. */
  readonly onError?: (error: unknown) => void
}

/**
 * MCP over stdio: newline-delimited JSON-RPC on `input`, answers on `output`, nothing else
 * on `output` (logs go to stderr). Requests run concurrently, as over HTTP, and the pipeline
 * schedules them. Resolves when `input` ends and every request in flight has been answered.
 */
export async function serveStdio (options: StdioOptions): Promise<void> {
  const { protocol, output } = options
  const cancellations = new Cancellations()
  const pending = new Set<Promise<void>>()
  const write = (text: string): void => { output.write(text + '\n') }

  const answer = async (id: JsonRpcId, run: () => Promise<McpAnswer | undefined>): Promise<void> => {
    try {
      const answer = await run()
      if (answer !== undefined) write(answer.text)
    } catch (error) {
      options.onError?.(error)
      write(errorText(id, JSON_RPC.internalError, 'internal error'))
    }
  }

  const lines = createInterface({ input: options.input, crlfDelay: Infinity })
  for await (const line of lines) {
    if (line.trim() === '') continue
    let message: unknown
    try {
      message = JSON.parse(line)
    } catch {
      write(errorText(null, JSON_RPC.parseError, 'parse error: the line is not JSON'))
      continue
    }
    const inbound = classify(message)
    if (inbound.type === 'invalid') {
      write(errorText(inbound.id, JSON_RPC.invalidRequest, inbound.message))
      continue
    }
    if (inbound.type === 'reply') continue
    const { call } = inbound
    if (call.id === undefined) {
      if (call.method === 'notifications/cancelled') cancellations.cancel('', call.params)
      continue
    }
    const id = call.id
    const cancel = call.method === 'tools/call' ? cancellations.open('', id) : undefined
    // Over stdio there are no headers to check: the envelope alone says which revision speaks.
    const version = envelopeVersionOf(call)
    if (version !== undefined && !MODERN_VERSIONS.includes(version)) {
      write(errorText(id, -32022, `Unsupported protocol version: ${version}`, { supported: MODERN_VERSIONS, requested: version }))
      continue
    }
    const done = answer(id, async () => await protocol.handle(call, options.callerOf(cancel), version !== undefined)).finally(() => {
      if (cancel !== undefined) cancellations.close(cancel)
      pending.delete(done)
    })
    pending.add(done)
  }
  await Promise.all(pending)
}
