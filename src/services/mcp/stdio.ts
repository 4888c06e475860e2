import type { Readable, Writable } from 'node:stream'
import type { CancelSignal } from '../../core/abort.js'
import { boundBreachOf, type InputBounds } from '../../core/input-bounds.js'
import { envelopeBounds, tooComplexMessage } from './envelope.js'
import { CANCELLABLE, Cancellations } from './cancellations.js'
import { classify, errorText, idOf, JSON_RPC, type JsonRpcId } from './json-rpc.js'
import { envelopeVersionOf, MODERN_VERSIONS } from './modern.js'
import type { McpAnswer, McpCaller, McpProtocol } from './protocol.js'
import type { Elicit } from '../../core/elicitation.js'
import { ClientRequests, elicitOver, takesFormElicitation } from './client-requests.js'

export interface StdioOptions {
  readonly protocol: McpProtocol
  readonly input: Readable
  readonly output: Writable
  /**
   * The caller of one request; `cancelled` aborts its tool call on `notifications/cancelled`,
   * `notify` writes a notification (progress) to the client, `elicit` asks it a question (when
   * its `initialize` said it can answer one).
   */
  readonly callerOf: (cancelled: CancelSignal | undefined, notify: (json: string) => void, elicit: Elicit | undefined) => McpCaller
  /** Told of a request that failed outside the protocol (a bug): it still gets an answer. */
  readonly onError?: (error: unknown) => void
  /** The longest message read (`BODY_LIMIT`): a longer line is answered with an error and skipped. */
  readonly maxBytes: number
  /** How deep and wide a call's input may be (a message gets room for its envelope). */
  readonly inputBounds: InputBounds
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
  const requests = new ClientRequests(write)
  /** Set by a 2025 client's `initialize` that takes form elicitation: the session's one channel can carry the question. */
  let elicit: Elicit | undefined

  const answer = async (id: JsonRpcId, run: () => Promise<McpAnswer | undefined>): Promise<void> => {
    try {
      const answer = await run()
      if (answer !== undefined) write(answer.text)
    } catch (error) {
      options.onError?.(error)
      write(errorText(id, JSON_RPC.internalError, 'internal error'))
    }
  }

  const bounds = envelopeBounds(options.inputBounds)
  for await (const line of linesOf(options.input, options.maxBytes)) {
    if (line === TOO_LONG) {
      write(errorText(null, JSON_RPC.invalidRequest, `the message is longer than ${options.maxBytes} bytes (BODY_LIMIT)`))
      continue
    }
    if (line.trim() === '') continue
    let message: unknown
    try {
      message = JSON.parse(line)
    } catch {
      write(errorText(null, JSON_RPC.parseError, 'parse error: the line is not JSON'))
      continue
    }
    const breach = boundBreachOf(message, bounds)
    if (breach !== undefined) {
      write(errorText(idOf(message), JSON_RPC.invalidParams, tooComplexMessage(breach), { errors: [breach] }))
      continue
    }
    const inbound = classify(message)
    if (inbound.type === 'invalid') {
      write(errorText(inbound.id, JSON_RPC.invalidRequest, inbound.message))
      continue
    }
    if (inbound.type === 'reply') {
      requests.reply(message as Record<string, unknown>)
      continue
    }
    const { call } = inbound
    if (call.id === undefined) {
      if (call.method === 'notifications/cancelled') cancellations.cancel('', call.params)
      continue
    }
    const id = call.id
    const cancel = CANCELLABLE.has(call.method) ? cancellations.open('', id) : undefined
    // Over stdio there are no headers to check: the envelope alone says which revision speaks.
    const version = envelopeVersionOf(call)
    if (version !== undefined && !MODERN_VERSIONS.includes(version)) {
      write(errorText(id, -32022, `Unsupported protocol version: ${version}`, { supported: MODERN_VERSIONS, requested: version }))
      continue
    }
    if (call.method === 'initialize') elicit = takesFormElicitation(call.params.capabilities) ? elicitOver(requests) : undefined
    // 2026-07-28 has no requests from server to client: its questions ride on the answer (not relayed yet).
    const done = answer(id, async () => await protocol.handle(call, options.callerOf(cancel, write, version === undefined ? elicit : undefined), version !== undefined)).finally(() => {
      if (cancel !== undefined) cancellations.close(cancel)
      pending.delete(done)
    })
    pending.add(done)
  }
  await Promise.all(pending)
}

/** A line longer than the bound: it is skipped to its end, never held whole. */
const TOO_LONG = Symbol('too long')

/**
 * The lines of `input` (without their `\n` or `\r\n`), each at most `maxBytes`: a longer one
 * yields `TOO_LONG` once and is dropped as it arrives, so a client cannot make the process
 * hold an unbounded message.
 */
async function * linesOf (input: Readable, maxBytes: number): AsyncGenerator<string | typeof TOO_LONG> {
  let parts: Buffer[] = []
  let size = 0
  let skipping = false
  for await (const chunk of input as AsyncIterable<Buffer | string>) {
    let data = typeof chunk === 'string' ? Buffer.from(chunk) : chunk
    for (let newline = data.indexOf(10); newline !== -1; newline = data.indexOf(10)) {
      const head = data.subarray(0, newline)
      data = data.subarray(newline + 1)
      if (skipping || size + head.length > maxBytes) {
        if (!skipping) yield TOO_LONG
        skipping = false
      } else {
        parts.push(head)
        const line = Buffer.concat(parts).toString('utf8')
        yield line.endsWith('\r') ? line.slice(0, -1) : line
      }
      parts = []
      size = 0
    }
    if (skipping) continue
    if (size + data.length > maxBytes) {
      yield TOO_LONG
      skipping = true
      parts = []
      size = 0
      continue
    }
    if (data.length > 0) {
      parts.push(data)
      size += data.length
    }
  }
  if (!skipping && size > 0) yield Buffer.concat(parts).toString('utf8')
}
