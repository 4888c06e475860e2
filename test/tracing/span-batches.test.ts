import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest'
import { diag, DiagLogLevel, SpanKind, TraceFlags } from '@opentelemetry/api'
import { ExportResultCode, type ExportResult } from '@opentelemetry/core'
import { resourceFromAttributes } from '@opentelemetry/resources'
import type { ReadableSpan } from '@opentelemetry/sdk-trace-node'
import { EncodedSpanBatches, type BatchSettings, type EncodedBatch } from '../../src/services/tracing/span-batches.js'
import { serializeSpans } from './serialize-spans.js'

/*
 * The processor that encodes each span when it ends: the SDK's batch processor's rules (batch
 * size, delay, queue bound, one export at a time, timeout, flush, shutdown), and requests that
 * are the bytes the serializer makes of the same spans.
 */

const resource = resourceFromAttributes({ 'service.name': 'toolgate' })
const scope = { name: 'toolgate', version: '1.0.0' }

function spanOf (n: number, sampled = true): ReadableSpan {
  const context = { traceId: n.toString(16).padStart(32, '0'), spanId: n.toString(16).padStart(16, '0'), traceFlags: sampled ? TraceFlags.SAMPLED : TraceFlags.NONE }
  return {
    name: `span ${n}`, kind: SpanKind.INTERNAL, spanContext: () => context, parentSpanContext: undefined, startTime: [1_700_000_000, n], endTime: [1_700_000_001, n],
    status: { code: 0 }, attributes: { n }, links: [], events: [], duration: [1, 0], ended: true, resource, instrumentationScope: scope,
    droppedAttributesCount: 0, droppedEventsCount: 0, droppedLinksCount: 0,
  }
}

/** An exporter that keeps each batch and answers when told. */
class HeldExporter {
  readonly batches: EncodedBatch[] = []
  readonly #answers: Array<(result: ExportResult) => void> = []
  shutDown = false

  export (batch: EncodedBatch, done: (result: ExportResult) => void): void {
    this.batches.push(batch)
    this.#answers.push(done)
  }

  /** Answer the oldest export not yet answered. */
  answer (code = ExportResultCode.SUCCESS): void {
    this.#answers.shift()!({ code })
  }

  async shutdown (): Promise<void> {
    this.shutDown = true
  }
}

/** An exporter that answers every export at once. */
class PromptExporter extends HeldExporter {
  override export (batch: EncodedBatch, done: (result: ExportResult) => void): void {
    super.export(batch, done)
    this.answer()
  }
}

const settings = (more: Partial<BatchSettings> = {}): BatchSettings => ({ maxQueueSize: 8, maxExportBatchSize: 3, scheduledDelayMillis: 1_000, exportTimeoutMillis: 30_000, ...more })
const spans = (from: number, count: number): ReadableSpan[] => Array.from({ length: count }, (_, i) => spanOf(from + i))
const bytesOf = (batch: EncodedBatch | undefined): string => Buffer.from(batch!.bytes).toString('hex')
const requestOf = (list: readonly ReadableSpan[]): string => Buffer.from(serializeSpans(list)).toString('hex')
const settle = async (): Promise<void> => { for (let i = 0; i < 5; i++) await Promise.resolve() }

beforeEach(() => { vi.useFakeTimers() })
afterEach(() => {
  vi.useRealTimers()
  diag.disable()
})

describe('encoded span batches', () => {
  it('sends a batch as soon as maxExportBatchSize spans have ended, as the serializer writes them', () => {
    const exporter = new HeldExporter()
    const batches = new EncodedSpanBatches(exporter, settings(), resource, scope)
    const ended = spans(1, 3)
    for (const span of ended.slice(0, 2)) batches.onEnd(span)
    expect(exporter.batches).toHaveLength(0)
    batches.onEnd(ended[2]!)
    expect(exporter.batches).toHaveLength(1)
    expect(exporter.batches[0]!.spans).toBe(3)
    expect(bytesOf(exporter.batches[0])).toBe(requestOf(ended))
  })

  it('sends a partial batch scheduledDelayMillis after it began, not before', () => {
    const exporter = new HeldExporter()
    const batches = new EncodedSpanBatches(exporter, settings(), resource, scope)
    batches.onEnd(spanOf(1))
    vi.advanceTimersByTime(999)
    expect(exporter.batches).toHaveLength(0)
    vi.advanceTimersByTime(1)
    expect(exporter.batches).toHaveLength(1)
    expect(bytesOf(exporter.batches[0])).toBe(requestOf([spanOf(1)]))
  })

  it('runs one export at a time: the next full batch goes when the one under way has answered', async () => {
    const exporter = new HeldExporter()
    const batches = new EncodedSpanBatches(exporter, settings(), resource, scope)
    for (const span of spans(1, 6)) batches.onEnd(span)
    expect(exporter.batches).toHaveLength(1)
    exporter.answer()
    await settle()
    expect(exporter.batches).toHaveLength(2)
    expect(bytesOf(exporter.batches[1])).toBe(requestOf(spans(4, 3)))
  })

  it('drops spans past maxQueueSize, counted, and warns with the count once there is room', async () => {
    const warnings: string[] = []
    diag.setLogger({ error: () => {}, warn: message => { warnings.push(message) }, info: () => {}, debug: () => {}, verbose: () => {} }, DiagLogLevel.WARN)
    const exporter = new HeldExporter()
    const batches = new EncodedSpanBatches(exporter, settings(), resource, scope)
    // 3 go out at once; 8 more fill the queue while that export is under way; 2 more are dropped.
    for (const span of spans(1, 13)) batches.onEnd(span)
    expect(warnings).toEqual([])
    exporter.answer()
    await settle()
    batches.onEnd(spanOf(14))
    expect(warnings).toEqual(['Dropped 2 spans because maxQueueSize reached'])
    for (let i = 0; i < 3; i++) {
      exporter.answer()
      await settle()
    }
    // Spans 12 and 13 were dropped; 14 came after the room was made.
    expect(exporter.batches.map(bytesOf)).toEqual([requestOf(spans(1, 3)), requestOf(spans(4, 3)), requestOf(spans(7, 3)), requestOf([spanOf(10), spanOf(11), spanOf(14)])])
  })

  it('leaves out spans that were not sampled', async () => {
    const exporter = new PromptExporter()
    const batches = new EncodedSpanBatches(exporter, settings(), resource, scope)
    batches.onEnd(spanOf(1, false))
    batches.onEnd(spanOf(2))
    await batches.forceFlush()
    expect(exporter.batches.map(bytesOf)).toEqual([requestOf([spanOf(2)])])
  })

  it('drops a span of another resource, with an error, rather than send it under the wrong one', async () => {
    const errors: string[] = []
    diag.setLogger({ error: message => { errors.push(message) }, warn: () => {}, info: () => {}, debug: () => {}, verbose: () => {} }, DiagLogLevel.ERROR)
    const exporter = new PromptExporter()
    const batches = new EncodedSpanBatches(exporter, settings(), resource, scope)
    batches.onEnd({ ...spanOf(1), resource: resourceFromAttributes({ 'service.name': 'other' }) })
    await batches.forceFlush()
    expect(exporter.batches).toHaveLength(0)
    expect(errors).toHaveLength(1)
  })

  it('forceFlush sends every waiting span in batches of at most maxExportBatchSize and waits for the export under way', async () => {
    const exporter = new HeldExporter()
    const batches = new EncodedSpanBatches(exporter, settings(), resource, scope)
    for (const span of spans(1, 8)) batches.onEnd(span)
    let flushed = false
    const flushing = batches.forceFlush().then(() => { flushed = true })
    await settle()
    expect(exporter.batches.map(batch => batch.spans)).toEqual([3, 3, 2])
    exporter.answer()
    exporter.answer()
    await settle()
    expect(flushed).toBe(false)
    exporter.answer()
    await flushing
    expect(exporter.batches.map(bytesOf)).toEqual([requestOf(spans(1, 3)), requestOf(spans(4, 3)), requestOf(spans(7, 2))])
  })

  it('forceFlush rejects when an export fails', async () => {
    const exporter = new HeldExporter()
    const batches = new EncodedSpanBatches(exporter, settings(), resource, scope)
    batches.onEnd(spanOf(1))
    const flushing = batches.forceFlush()
    exporter.answer(ExportResultCode.FAILED)
    await expect(flushing).rejects.toThrow(/span export failed/)
  })

  it('gives up on an export after exportTimeoutMillis, so the next batch goes', async () => {
    const exporter = new HeldExporter()
    const batches = new EncodedSpanBatches(exporter, settings({ exportTimeoutMillis: 500 }), resource, scope)
    for (const span of spans(1, 6)) batches.onEnd(span)
    expect(exporter.batches).toHaveLength(1)
    vi.advanceTimersByTime(500)
    await settle()
    expect(exporter.batches).toHaveLength(2)
  })

  it('counts what became of the spans: exported, dropped at a full queue, failed with their export', async () => {
    const exporter = new HeldExporter()
    const batches = new EncodedSpanBatches(exporter, settings(), resource, scope)
    for (const span of spans(1, 13)) batches.onEnd(span)
    expect(batches.counts).toEqual({ exported: 0, dropped: 2, failed: 0 })
    exporter.answer()
    await settle()
    exporter.answer(ExportResultCode.FAILED)
    await settle()
    expect(batches.counts).toEqual({ exported: 3, dropped: 2, failed: 3 })
  })

  it('says once that exports fail, with the error, and once that they succeed again, with how many failed', async () => {
    const said: Array<[string, string]> = []
    diag.setLogger({ error: message => { said.push(['error', message]) }, warn: message => { said.push(['warn', message]) }, info: () => {}, debug: () => {}, verbose: () => {} }, DiagLogLevel.WARN)
    const exporter = new HeldExporter()
    const batches = new EncodedSpanBatches(exporter, settings(), resource, scope)
    for (const span of spans(1, 9)) batches.onEnd(span)
    for (const code of [ExportResultCode.FAILED, ExportResultCode.FAILED, ExportResultCode.SUCCESS]) {
      exporter.answer(code)
      await settle()
    }
    expect(said).toHaveLength(2)
    expect(said[0]![0]).toBe('error')
    expect(said[0]![1]).toMatch(/^span export failed: span export failed; until one succeeds/)
    expect(said[1]).toEqual(['warn', 'span exports succeed again, after 2 failed'])
  })

  it('shutdown sends what waits, shuts the exporter down, and takes no span after', async () => {
    const exporter = new PromptExporter()
    const batches = new EncodedSpanBatches(exporter, settings(), resource, scope)
    batches.onEnd(spanOf(1))
    await batches.shutdown()
    expect(exporter.batches.map(bytesOf)).toEqual([requestOf([spanOf(1)])])
    expect(exporter.shutDown).toBe(true)
    batches.onEnd(spanOf(2))
    await batches.forceFlush()
    vi.advanceTimersByTime(10_000)
    expect(exporter.batches).toHaveLength(1)
  })
})
