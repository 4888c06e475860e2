import { context, diag, TraceFlags, type Context } from '@opentelemetry/api'
import { ExportResultCode, suppressTracing, type ExportResult, type InstrumentationScope } from '@opentelemetry/core'
import type { Resource } from '@opentelemetry/resources'
import type { ReadableSpan, Span, SpanProcessor } from '@opentelemetry/sdk-trace-node'
import { writeResource, writeSchemaUrl, writeScope, writeSpanField, type OtlpResource, type OtlpScope } from './otlp-protobuf.js'
import { Encoder } from './protobuf-writer.js'
import type { SpanCounts } from './types.js'

/*
 * The batch span processor for OTLP/HTTP protobuf, with each span encoded when it ends instead
 * of when its batch is sent. The SDK's processor keeps every ended span object, with its
 * attributes, ids and times, until its batch goes out: up to 2,048 of them live through the
 * young generation's collections, copied at each and then promoted. A scavenge that took 1.1 to
 * 1.4 ms with nothing sampled took 2.5 to 9 with every call sampled (bench:tracing, --trace-gc),
 * 2.3 to 3 with this. Encoded at once, a span's objects die young, and what waits is bytes
 * outside the heap.
 *
 * Everything else is the SDK's `BatchSpanProcessor`, with its settings (`OTEL_BSP_*`): sampled
 * spans only; at most `maxQueueSize` spans waiting, the rest dropped and counted (a warning with
 * the count when there is room again); a batch goes out when `maxExportBatchSize` spans wait or
 * `scheduledDelayMillis` after the first, one export at a time, each given up on after
 * `exportTimeoutMillis` so the next can start; `forceFlush` sends everything waiting,
 * `shutdown` flushes and stops. Exports run with tracing suppressed.
 *
 * Besides, it counts what became of the spans (`counts`, served as a metric), and says once when
 * exports start failing (with the error) and once when they succeed again (with how many failed),
 * rather than once per failed batch: a collector that is down would flood the log.
 */

/** A request ready to send: its bytes and how many spans they hold. */
export interface EncodedBatch {
  readonly bytes: Uint8Array
  readonly spans: number
}

/** What sends an encoded batch: the OTLP/HTTP transport (`protobuf-exporter.ts`). */
export interface EncodedBatchExporter {
  export (batch: EncodedBatch, done: (result: ExportResult) => void): void
  shutdown (): Promise<void>
}

export interface BatchSettings {
  readonly maxQueueSize: number
  readonly maxExportBatchSize: number
  readonly scheduledDelayMillis: number
  readonly exportTimeoutMillis: number
}

/** The open batch's buffer is kept between batches up to this size (a batch of 512 spans is about 200 KiB). */
const KEPT_BYTES = 1024 * 1024
const FIRST_BYTES = 64 * 1024

export class EncodedSpanBatches implements SpanProcessor {
  readonly #exporter: EncodedBatchExporter
  readonly #settings: BatchSettings
  readonly #resource: Resource
  readonly #scope: InstrumentationScope
  readonly #envelope: SpanEnvelope
  /** The spans' fields of the batch being filled. */
  readonly #open = new Encoder(Buffer.allocUnsafe(FIRST_BYTES))
  #openSpans = 0
  /** Full batches not yet handed to the exporter, oldest first. */
  readonly #ready: EncodedBatch[] = []
  /** Spans waiting, in `#open` and `#ready`: what `maxQueueSize` bounds. */
  #waiting = 0
  #dropped = 0
  readonly #counts = { exported: 0, dropped: 0, failed: 0 }
  /** Exports failed since the last that succeeded. */
  #failing = 0
  /** The export under way, one at a time (`forceFlush` sends the rest beside it). */
  #exporting: Promise<void> | undefined
  #timer: NodeJS.Timeout | undefined
  #shutdown: Promise<void> | undefined

  constructor (exporter: EncodedBatchExporter, settings: BatchSettings, resource: Resource, scope: InstrumentationScope) {
    this.#exporter = exporter
    this.#settings = settings
    this.#resource = resource
    this.#scope = scope
    this.#envelope = new SpanEnvelope(resource, scope)
  }

  onStart (_span: Span, _parentContext: Context): void {}

  onEnd (span: ReadableSpan): void {
    if (this.#shutdown !== undefined || (span.spanContext().traceFlags & TraceFlags.SAMPLED) === 0) return
    if (span.resource !== this.#resource || span.instrumentationScope !== this.#scope) {
      // Only the tracer it was made with ends spans here: another's would go out under the wrong resource.
      diag.error('EncodedSpanBatches: a span of another resource or scope was dropped')
      return
    }
    if (this.#waiting >= this.#settings.maxQueueSize) {
      this.#counts.dropped++
      if (this.#dropped++ === 0) diag.debug('maxQueueSize reached, dropping spans')
      return
    }
    if (this.#dropped > 0) {
      diag.warn(`Dropped ${this.#dropped} spans because maxQueueSize reached`)
      this.#dropped = 0
    }
    writeSpanField(this.#open, span)
    this.#openSpans++
    this.#waiting++
    if (this.#openSpans >= this.#settings.maxExportBatchSize) this.#seal()
    this.#next()
  }

  /** Sampled spans so far: exported, dropped at a full queue, lost to a failed or timed-out export. */
  get counts (): SpanCounts {
    return { ...this.#counts }
  }

  async forceFlush (): Promise<void> {
    if (this.#shutdown !== undefined) return await this.#shutdown
    await this.#flushAll()
  }

  async shutdown (): Promise<void> {
    this.#shutdown ??= this.#flushAll().then(async () => { await this.#exporter.shutdown() })
    await this.#shutdown
  }

  /** Every span waiting, sent at once, and the export under way finished. */
  async #flushAll (): Promise<void> {
    this.#clearTimer()
    this.#seal()
    const batches = this.#ready.splice(0)
    await Promise.all([this.#exporting, ...batches.map(async batch => { await this.#send(batch) })])
  }

  /** The open batch, closed into a request of its own. */
  #seal (): void {
    if (this.#openSpans === 0) return
    this.#ready.push({ bytes: this.#envelope.request(this.#open.written()), spans: this.#openSpans })
    this.#open.reset(KEPT_BYTES, FIRST_BYTES)
    this.#openSpans = 0
  }

  /** Export the oldest full batch if none is under way, else wait for the open one to fill or time out. */
  #next (): void {
    if (this.#exporting !== undefined) return
    const batch = this.#ready.shift()
    if (batch !== undefined) {
      this.#clearTimer()
      // A failure is counted and told in `#send`; the next batch goes all the same.
      this.#exporting = this.#send(batch).catch(() => {}).finally(() => {
        this.#exporting = undefined
        this.#next()
      })
      return
    }
    if (this.#openSpans > 0 && this.#timer === undefined) {
      this.#timer = setTimeout(() => {
        this.#timer = undefined
        this.#seal()
        this.#next()
      }, this.#settings.scheduledDelayMillis)
      this.#timer.unref()
    }
  }

  /**
   * One batch to the exporter; rejected on failure, or after the export timeout (the export itself
   * may go on, but its spans are counted as failed: whichever comes first counts).
   */
  async #send (batch: EncodedBatch): Promise<void> {
    this.#waiting -= batch.spans
    try {
      await new Promise<void>((resolve, reject) => {
        const timer = setTimeout(() => { reject(new Error(`span export timed out after ${this.#settings.exportTimeoutMillis} ms`)) }, this.#settings.exportTimeoutMillis)
        context.with(suppressTracing(context.active()), () => {
          this.#exporter.export(batch, result => {
            clearTimeout(timer)
            if (result.code === ExportResultCode.SUCCESS) resolve()
            else reject(result.error ?? new Error('span export failed'))
          })
        })
      })
    } catch (error) {
      this.#counts.failed += batch.spans
      if (this.#failing++ === 0) diag.error(`span export failed: ${(error as Error).message ?? String(error)}; until one succeeds, failed exports are only counted (toolgate_trace_spans_total{outcome="failed"})`)
      throw error
    }
    this.#counts.exported += batch.spans
    if (this.#failing > 0) {
      diag.warn(`span exports succeed again, after ${this.#failing} failed`)
      this.#failing = 0
    }
  }

  #clearTimer (): void {
    if (this.#timer === undefined) return
    clearTimeout(this.#timer)
    this.#timer = undefined
  }
}

/**
 * What the SDK's serializer writes around the spans of one resource and one scope, encoded once:
 * a request is these bytes around the spans' fields (`writeSpanField`, one after another). So a
 * span can be encoded when it ends, and a batch of them sent as it is.
 */
export class SpanEnvelope {
  readonly #resource: Uint8Array
  readonly #scope: Uint8Array
  readonly #scopeSchema: Uint8Array
  readonly #resourceSchema: Uint8Array

  constructor (resource: OtlpResource, scope: OtlpScope) {
    this.#resource = encoded(out => { writeResource(out, resource) })
    this.#scope = encoded(out => { writeScope(out, scope) })
    this.#scopeSchema = encoded(out => { writeSchemaUrl(out, scope.schemaUrl) })
    this.#resourceSchema = encoded(out => { writeSchemaUrl(out, resource.schemaUrl) })
  }

  /** The request of these spans' fields (one or more), in a buffer of its own. */
  request (spanFields: Uint8Array): Uint8Array {
    const scopeSpans = this.#scope.length + spanFields.length + this.#scopeSchema.length
    const resourceSpans = this.#resource.length + 1 + varintLength(scopeSpans) + scopeSpans + this.#resourceSchema.length
    const out = new Encoder(Buffer.allocUnsafeSlow(1 + varintLength(resourceSpans) + resourceSpans))
    out.tag(1, 2)
    out.varint(resourceSpans)
    out.copy(this.#resource)
    out.tag(2, 2)
    out.varint(scopeSpans)
    out.copy(this.#scope)
    out.copy(spanFields)
    out.copy(this.#scopeSchema)
    out.copy(this.#resourceSchema)
    return out.written()
  }
}

function encoded (write: (out: Encoder) => void): Uint8Array {
  const out = new Encoder(Buffer.allocUnsafe(256))
  write(out)
  return out.finish()
}

function varintLength (value: number): number {
  let length = 1
  while (value >= 0x80) {
    value = Math.floor(value / 0x80)
    length++
  }
  return length
}
