/**
 * The least tracing a REST call can take, for the floor of the tracing rows: the two spans the
 * contract promises (the HTTP server span and `execute_tool echo` under it, with the same
 * attributes the gateway gives them), written by hand straight into OTLP protobuf when they end,
 * and sent as the SDK's batch processor sends (512 spans, or 5 s after the first). No span
 * objects, no attribute maps, no context, no sampler object, no limits, no drop accounting: what
 * is left is the work any tracer of these spans does (ids, clock reads, the bytes, the export).
 * A caller's `traceparent` is continued; a root is sampled at `ratio` on its trace id.
 */
import { randomFillSync } from 'node:crypto'
import { Agent, request as post } from 'node:http'
import { SpanEnvelope } from '../../src/services/tracing/span-batches.js'
import { Encoder } from '../../src/services/tracing/protobuf-writer.js'

const BATCH_SPANS = 512
const DELAY_MS = 5_000
/** OTLP's span kinds (the API's plus one) and flags (sampled, parent's remoteness known). */
const KIND_INTERNAL = 1
const KIND_SERVER = 2
const HAS_IS_REMOTE = 0x100

/** One request's server span while it is open; null fields of a span the sampler left out. */
export interface HandSpan {
  readonly traceId: Uint8Array
  readonly spanId: Uint8Array
  readonly parentId: Uint8Array | undefined
  readonly start: number
}

export class HandTracer {
  readonly #pool = Buffer.allocUnsafe(4096)
  #taken = 4096
  readonly #open = new Encoder(Buffer.allocUnsafe(256 * 1024))
  #spans = 0
  #timer: NodeJS.Timeout | undefined
  readonly #envelope = new SpanEnvelope({ attributes: { 'service.name': 'toolgate-bench' } }, { name: 'toolgate' })
  readonly #agent = new Agent({ keepAlive: true, maxSockets: 1 })
  readonly #bound: number

  constructor (readonly endpoint: string, ratio: number) {
    this.#bound = Math.floor(ratio * 0x100000000)
  }

  /** The server span of a request with these headers, or undefined when it is not sampled. */
  open (traceparent: string | string[] | undefined): HandSpan | undefined {
    const start = nowMs()
    if (typeof traceparent === 'string' && traceparent.length === 55 && traceparent.startsWith('00-')) {
      if (!traceparent.endsWith('1')) return undefined
      return { traceId: Buffer.from(traceparent.slice(3, 35), 'hex'), spanId: this.#ids(8), parentId: Buffer.from(traceparent.slice(36, 52), 'hex'), start }
    }
    const traceId = this.#ids(16)
    if (traceId.readUInt32BE(0) >= this.#bound) return undefined
    return { traceId, spanId: this.#ids(8), parentId: undefined, start }
  }

  /** The call span under `server`, from `start` to now, with the call's facts. */
  endCall (server: HandSpan, start: number, callId: string, executeMs: number): void {
    const out = this.#begin(server.traceId, this.#ids(8), server.spanId, 'execute_tool echo', KIND_INTERNAL, start)
    out.copy(CALL_STATIC)
    text(out, 'gen_ai.tool.call.id', callId)
    text(out, 'toolgate.outcome', 'ok')
    int(out, 'toolgate.status', 200)
    flag(out, 'toolgate.executed', true)
    int(out, 'toolgate.queue_wait_ms', 0)
    double(out, 'toolgate.execute_ms', executeMs)
    flag(out, 'toolgate.idempotent_replay', false)
    flag(out, 'toolgate.dry_run', false)
    flag(out, 'toolgate.escalated', false)
    // Its parent is the server span, in this process.
    this.#end(out, false)
  }

  /** The server span, at its response's end. */
  endServer (span: HandSpan, method: string, path: string, status: number): void {
    const out = this.#begin(span.traceId, span.spanId, span.parentId, `${method} ${path}`, KIND_SERVER, span.start)
    text(out, 'http.request.method', method)
    text(out, 'url.path', path)
    text(out, 'url.scheme', 'http')
    text(out, 'network.protocol.version', '1.1')
    text(out, 'http.route', path)
    int(out, 'http.response.status_code', status)
    this.#end(out, span.parentId !== undefined)
  }

  #begin (traceId: Uint8Array, spanId: Uint8Array, parentId: Uint8Array | undefined, name: string, kind: number, start: number): Encoder {
    const out = this.#open
    out.tag(2, 2)
    this.#spanStart = out.begin()
    out.tag(1, 2)
    out.bytes(traceId)
    out.tag(2, 2)
    out.bytes(spanId)
    if (parentId !== undefined) {
      out.tag(4, 2)
      out.bytes(parentId)
    }
    out.field(5, name)
    out.tag(6, 0)
    out.varint(kind)
    out.tag(7, 1)
    out.time(hrTime(start))
    out.tag(8, 1)
    out.time(hrTime(nowMs()))
    return out
  }

  #spanStart = 0

  #end (out: Encoder, remoteParent: boolean): void {
    out.tag(15, 2)
    const status = out.begin()
    out.tag(3, 0)
    out.varint(0)
    out.end(status)
    out.tag(16, 5)
    out.fixed32(1 | HAS_IS_REMOTE | (remoteParent ? 0x200 : 0))
    out.end(this.#spanStart)
    if (++this.#spans >= BATCH_SPANS) this.flush()
    else this.#timer ??= setTimeout(() => { this.flush() }, DELAY_MS).unref()
  }

  /** Send what waits. */
  flush (): void {
    clearTimeout(this.#timer)
    this.#timer = undefined
    if (this.#spans === 0) return
    const body = this.#envelope.request(this.#open.written())
    this.#open.reset(1024 * 1024, 256 * 1024)
    this.#spans = 0
    const url = new URL('/v1/traces', this.endpoint)
    const sent = post(url, { method: 'POST', agent: this.#agent, headers: { 'content-type': 'application/x-protobuf', 'content-length': body.length } }, response => { response.resume() })
    sent.on('error', () => {})
    sent.end(body)
  }

  #ids (bytes: number): Buffer {
    if (this.#taken + bytes > this.#pool.length) {
      randomFillSync(this.#pool)
      this.#taken = 0
    }
    // A copy: the pool is refilled under ids still to be written.
    const id = Buffer.from(this.#pool.subarray(this.#taken, this.#taken + bytes))
    this.#taken += bytes
    return id
  }
}

/** The call span's declaration attributes, the same for every call of the tool: written once. */
const CALL_STATIC = ((): Uint8Array => {
  const out = new Encoder(Buffer.allocUnsafe(1024))
  text(out, 'gen_ai.operation.name', 'execute_tool')
  text(out, 'gen_ai.tool.name', 'echo')
  text(out, 'gen_ai.tool.type', 'function')
  text(out, 'toolgate.tool.kind', 'read')
  out.tag(9, 2)
  const effects = out.begin()
  out.field(1, 'toolgate.tool.effects')
  out.tag(2, 2)
  const value = out.begin()
  out.tag(5, 2)
  out.varint(0)
  out.end(value)
  out.end(effects)
  flag(out, 'toolgate.tool.read_only', true)
  flag(out, 'toolgate.tool.concurrency_safe', true)
  return out.finish()
})()

function text (out: Encoder, key: string, value: string): void {
  const start = attribute(out, key)
  out.field(1, value)
  close(out, start)
}

function flag (out: Encoder, key: string, value: boolean): void {
  const start = attribute(out, key)
  out.tag(2, 0)
  out.varint(value ? 1 : 0)
  close(out, start)
}

function int (out: Encoder, key: string, value: number): void {
  const start = attribute(out, key)
  out.tag(3, 0)
  out.varint(value)
  close(out, start)
}

function double (out: Encoder, key: string, value: number): void {
  const start = attribute(out, key)
  out.tag(4, 1)
  out.double(value)
  close(out, start)
}

/** A span's `KeyValue` field 9 opened, its key written and its value's field opened: [pair, value]. */
function attribute (out: Encoder, key: string): [number, number] {
  out.tag(9, 2)
  const pair = out.begin()
  out.field(1, key)
  out.tag(2, 2)
  return [pair, out.begin()]
}

function close (out: Encoder, [pair, value]: [number, number]): void {
  out.end(value)
  out.end(pair)
}

export function nowMs (): number {
  return performance.timeOrigin + performance.now()
}

function hrTime (ms: number): [number, number] {
  const seconds = Math.floor(ms / 1000)
  return [seconds, Math.round((ms - seconds * 1000) * 1e6)]
}
