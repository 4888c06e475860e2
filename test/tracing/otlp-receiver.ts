import { createServer, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import { readTraceRequest } from './otlp-proto-reader.js'

/** One span as OTLP/JSON carries it, attributes flattened to plain values. */
export interface ReceivedSpan {
  readonly traceId: string
  readonly spanId: string
  readonly parentSpanId?: string
  readonly name: string
  readonly kind: number
  readonly attributes: Record<string, unknown>
  readonly status: { readonly code?: number, readonly message?: string }
  readonly service: unknown
  /** The resource's attributes, flattened. */
  readonly resource: Record<string, unknown>
}

interface AnyValue { stringValue?: string, boolValue?: boolean, intValue?: string | number, doubleValue?: number, arrayValue?: { values?: AnyValue[] } }
interface KeyValue { key: string, value: AnyValue }

/**
 * A tiny OTLP/HTTP receiver (JSON and protobuf): what a collector would get, collected in memory.
 * Independent of the SDK that sends: it parses the wire format itself.
 */
export class OtlpReceiver {
  readonly spans: ReceivedSpan[] = []
  readonly contentTypes: string[] = []
  readonly #server: Server

  private constructor (server: Server) {
    this.#server = server
  }

  static async start (): Promise<OtlpReceiver> {
    const receiver: OtlpReceiver = new OtlpReceiver(createServer((request, response) => {
      const chunks: Buffer[] = []
      request.on('data', (chunk: Buffer) => chunks.push(chunk))
      request.on('end', () => {
        receiver.contentTypes.push(String(request.headers['content-type']))
        const type = String(request.headers['content-type'])
        if (request.url === '/v1/traces' && type.startsWith('application/json')) receiver.#collect(JSON.parse(Buffer.concat(chunks).toString('utf8')))
        if (request.url === '/v1/traces' && type === 'application/x-protobuf') receiver.#collectProtobuf(Buffer.concat(chunks))
        response.writeHead(200, { 'content-type': 'application/json' }).end('{}')
      })
    }))
    await new Promise<void>(resolve => receiver.#server.listen(0, '127.0.0.1', resolve))
    return receiver
  }

  get url (): string {
    return `http://127.0.0.1:${(this.#server.address() as AddressInfo).port}`
  }

  named (name: string): ReceivedSpan[] {
    return this.spans.filter(span => span.name === name)
  }

  async close (): Promise<void> {
    await new Promise<void>(resolve => this.#server.close(() => { resolve() }))
  }

  #collectProtobuf (body: Uint8Array): void {
    for (const { span, resource } of readTraceRequest(body)) this.spans.push({ ...span, service: resource['service.name'], resource } as unknown as ReceivedSpan)
  }

  #collect (body: { resourceSpans?: Array<{ resource?: { attributes?: KeyValue[] }, scopeSpans?: Array<{ spans?: Array<Record<string, unknown>> }> }> }): void {
    for (const resourceSpans of body.resourceSpans ?? []) {
      const resource = flatten(resourceSpans.resource?.attributes ?? [])
      for (const scope of resourceSpans.scopeSpans ?? []) {
        for (const span of scope.spans ?? []) {
          this.spans.push({
            traceId: span.traceId as string,
            spanId: span.spanId as string,
            parentSpanId: span.parentSpanId === '' ? undefined : span.parentSpanId as string | undefined,
            name: span.name as string,
            kind: span.kind as number,
            attributes: flatten((span.attributes ?? []) as KeyValue[]),
            status: (span.status ?? {}) as ReceivedSpan['status'],
            service: resource['service.name'],
            resource,
          })
        }
      }
    }
  }
}

function flatten (attributes: readonly KeyValue[]): Record<string, unknown> {
  return Object.fromEntries(attributes.map(({ key, value }) => [key, valueOf(value)]))
}

function valueOf (value: AnyValue): unknown {
  if (value.stringValue !== undefined) return value.stringValue
  if (value.boolValue !== undefined) return value.boolValue
  if (value.intValue !== undefined) return Number(value.intValue)
  if (value.doubleValue !== undefined) return value.doubleValue
  if (value.arrayValue !== undefined) return (value.arrayValue.values ?? []).map(valueOf)
  return undefined
}
