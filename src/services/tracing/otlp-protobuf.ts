import type { Link, SpanContext } from '@opentelemetry/api'
import type { ReadableSpan, TimedEvent } from '@opentelemetry/sdk-trace-node'
import type { AttributeShape, OwnAttributes } from './own-attributes.js'
import { Encoder } from './protobuf-writer.js'

/*
 * Spans as an OTLP `ExportTraceServiceRequest` in protobuf, the bytes the SDK's own serializer
 * makes (the tests compare them byte for byte), in one pass instead of its two (it measures the
 * request, then writes it), with each attribute key encoded once for the life of the process
 * rather than once per span. Measured on a gateway's two spans of a call, this was about a third
 * of what tracing every call cost the event loop.
 *
 * Here are the request's parts: a span as a field of its scope's spans (`writeSpanField`), the
 * resource and the scope those are grouped under, their schema URLs. The gateway's batches
 * (`span-batches.ts`) write each span as it ends and put the request's envelope around them
 * when they are sent (`SpanEnvelope`); the tests put a request of any spans together from the
 * same parts, grouped as the SDK groups them (test/tracing/serialize-spans.ts).
 *
 * Field numbers are those of opentelemetry/proto/trace/v1/trace.proto and common/v1/common.proto.
 */

type Attributes = Readonly<Record<string, unknown>>
/** A span that keeps the gateway's attributes in blocks (`recorded-span.ts`): they come first in `attributes`, then the rest. */
interface ShapedSpan { readonly shapedAttributes: readonly OwnAttributes[] | undefined, readonly plainAttributes: Attributes }
/** The fields of a resource and of a scope that OTLP carries (the SDK's types have these and more). */
export interface OtlpResource { readonly attributes: Attributes, readonly schemaUrl?: string }
export interface OtlpScope { readonly name: string, readonly version?: string, readonly schemaUrl?: string, readonly attributes?: Attributes, readonly droppedAttributesCount?: number }

/** OTLP's span flags: the W3C trace flags and whether the parent is remote (and that this is known). */
const HAS_IS_REMOTE = 0x100
const IS_REMOTE = 0x200

/** A `ResourceSpans`' resource (field 1). */
export function writeResource (out: Encoder, resource: OtlpResource): void {
  out.tag(1, 2)
  const start = out.begin()
  if (truthy(resource.attributes)) writeAttributes(out, resource.attributes, 1)
  out.tag(2, 0)
  out.varint(0)
  out.end(start)
}

/** A `ScopeSpans`' instrumentation scope (field 1). */
export function writeScope (out: Encoder, scope: OtlpScope): void {
  out.tag(1, 2)
  const start = out.begin()
  out.field(1, scope.name)
  if (truthy(scope.version)) out.field(2, scope.version)
  if (truthy(scope.attributes)) writeAttributes(out, scope.attributes, 3)
  if (truthy(scope.droppedAttributesCount)) {
    out.tag(4, 0)
    out.varint(scope.droppedAttributesCount)
  }
  out.end(start)
}

/** A span as one field of its `ScopeSpans` (tag, length, `Span`). */
export function writeSpanField (out: Encoder, span: ReadableSpan): void {
  out.tag(2, 2)
  writeSpan(out, span)
}

/** A `ResourceSpans`' or `ScopeSpans`' schema URL (field 3, after what it holds), when it has one. */
export function writeSchemaUrl (out: Encoder, schemaUrl: string | undefined): void {
  if (truthy(schemaUrl)) out.field(3, schemaUrl)
}

function writeSpan (out: Encoder, span: ReadableSpan): void {
  const start = out.begin()
  const context = span.spanContext()
  writeIds(out, context)
  const parent = span.parentSpanContext
  if (truthy(parent?.spanId)) {
    out.tag(4, 2)
    out.hex(parent.spanId)
  }
  out.field(5, span.name)
  // The API's kinds start at 0 for INTERNAL; OTLP keeps 0 for "unspecified".
  if ((span.kind as number | undefined) != null) {
    out.tag(6, 0)
    out.varint(span.kind + 1)
  }
  out.tag(7, 1)
  out.time(span.startTime)
  out.tag(8, 1)
  out.time(span.endTime)
  const shaped = span as Partial<ShapedSpan> & ReadableSpan
  if (shaped.plainAttributes === undefined) {
    if (truthy(span.attributes)) writeAttributes(out, span.attributes, 9)
  } else {
    if (shaped.shapedAttributes !== undefined) for (const block of shaped.shapedAttributes) writeBlock(out, block)
    writeAttributes(out, shaped.plainAttributes, 9)
  }
  out.tag(10, 0)
  out.varint(span.droppedAttributesCount)
  for (const event of span.events) writeEvent(out, event)
  out.tag(12, 0)
  out.varint(span.droppedEventsCount)
  for (const link of span.links) writeLink(out, link)
  out.tag(14, 0)
  out.varint(span.droppedLinksCount)
  out.tag(15, 2)
  const status = out.begin()
  if (truthy(span.status.message)) out.field(2, span.status.message)
  out.tag(3, 0)
  out.varint(span.status.code)
  out.end(status)
  out.tag(16, 5)
  out.fixed32(spanFlags(context.traceFlags, parent?.isRemote))
  out.end(start)
}

/** Fields 1 to 3 of a span and of a link alike: trace id, span id, trace state. */
function writeIds (out: Encoder, context: SpanContext): void {
  out.tag(1, 2)
  out.hex(context.traceId)
  out.tag(2, 2)
  out.hex(context.spanId)
  const traceState = context.traceState?.serialize()
  if (truthy(traceState)) out.field(3, traceState)
}

function writeEvent (out: Encoder, event: TimedEvent): void {
  out.tag(11, 2)
  const start = out.begin()
  out.tag(1, 1)
  out.time(event.time)
  out.field(2, event.name)
  if (truthy(event.attributes)) writeAttributes(out, event.attributes, 3)
  out.tag(4, 0)
  out.varint(event.droppedAttributesCount || 0) // `||`, as the SDK: NaN too
  out.end(start)
}

function writeLink (out: Encoder, link: Link): void {
  out.tag(13, 2)
  const start = out.begin()
  const context = link.context
  writeIds(out, context)
  if (truthy(link.attributes)) writeAttributes(out, link.attributes, 4)
  out.tag(5, 0)
  out.varint(link.droppedAttributesCount || 0) // `||`, as the SDK: NaN too
  out.tag(6, 5)
  out.fixed32(spanFlags(context.traceFlags, context.isRemote))
  out.end(start)
}

function spanFlags (traceFlags: number, isRemote: boolean | undefined): number {
  return (traceFlags & 0xff) | HAS_IS_REMOTE | (isRemote === true ? IS_REMOTE : 0)
}

/** Each own key as a `KeyValue` in `field`, in the object's order. */
function writeAttributes (out: Encoder, attributes: Attributes, field: number): void {
  for (const key in attributes) {
    if (Object.hasOwn(attributes, key)) writeKeyValue(out, field, key, knownKey(key), attributes[key])
  }
}

/** A fixed block's `KeyValue`s, encoded at their first span: a declaration's, the same for every call of its tool. */
const fixedBlocks = new WeakMap<OwnAttributes, Uint8Array>()
/** Each shape's keys as `knownKey` has them, looked up once. */
const shapeKeys = new WeakMap<AttributeShape, ReadonlyArray<KnownKey | undefined>>()

/** A span's block of the gateway's own attributes, by position: the keys' bytes found once per shape. */
function writeBlock (out: Encoder, block: OwnAttributes): void {
  const fixed = block.fixed === true ? fixedBlocks.get(block) : undefined
  if (fixed !== undefined) {
    out.copy(fixed)
    return
  }
  const { shape, values } = block
  let known = shapeKeys.get(shape)
  if (known === undefined) shapeKeys.set(shape, known = shape.keys.map(knownKey))
  const start = out.length
  for (let i = 0; i < values.length; i++) writeKeyValue(out, 9, shape.keys[i]!, known[i], values[i])
  if (block.fixed === true) fixedBlocks.set(block, out.since(start))
}

/**
 * One `KeyValue` in `field`. A key with a short string or a boolean (a tool's name, an outcome, a
 * flag) is copied whole from the pairs seen before.
 */
function writeKeyValue (out: Encoder, field: number, key: string, known: KnownKey | undefined, value: unknown): void {
  out.tag(field, 2)
  const repeats = known !== undefined && (typeof value === 'boolean' || (typeof value === 'string' && value.length <= MAX_VALUE_LENGTH))
  const pair = repeats ? known.pairs.get(value) : undefined
  if (pair !== undefined) {
    out.copy(pair)
    return
  }
  const start = out.begin()
  if (known === undefined) out.field(1, key)
  else out.copy(known.field)
  out.tag(2, 2)
  const valueStart = out.begin()
  writeAnyValue(out, value)
  out.end(valueStart)
  out.end(start)
  if (repeats && known.pairs.size < MAX_PAIRS) known.pairs.set(value, out.since(start))
}

/** An attribute key as written: its `KeyValue.key` field, and whole `KeyValue`s (length first) by value. */
interface KnownKey {
  readonly field: Uint8Array
  readonly pairs: Map<unknown, Uint8Array>
}

/*
 * What is kept, for the life of the process, is bounded: at most 512 keys of up to 64
 * characters, each with at most 16 values of up to 32 characters (about 1 MiB at most for ASCII,
 * 2.5 MiB were every character three bytes of UTF-8, whatever code sets attributes). A flag has two values and an outcome a few; an id is new each call and
 * fills its key's 16 once. The values kept are the span's own (a path, a tool's name), as an
 * exporter would hold them anyway until sent.
 */
const MAX_KEYS = 512
const MAX_KEY_LENGTH = 64
const MAX_PAIRS = 16
const MAX_VALUE_LENGTH = 32
const knownKeys = new Map<string, KnownKey>()

function knownKey (key: string): KnownKey | undefined {
  let known = knownKeys.get(key)
  if (known === undefined && knownKeys.size < MAX_KEYS && key.length <= MAX_KEY_LENGTH) {
    const bytes = Buffer.from(key, 'utf8')
    const field = new Encoder(Buffer.allocUnsafe(bytes.length + 6))
    field.tag(1, 2)
    field.varint(bytes.length)
    field.copy(bytes)
    known = { field: field.finish(), pairs: new Map() }
    knownKeys.set(key, known)
  }
  return known
}

const INT64_MIN = -(2 ** 63)
const INT64_END = 2 ** 63

/** An `AnyValue`'s one field; nothing for a value OTLP has no field for (undefined, null, a function). */
function writeAnyValue (out: Encoder, value: unknown): void {
  if (typeof value === 'string') {
    out.field(1, value)
  } else if (typeof value === 'boolean') {
    out.tag(2, 0)
    out.varint(value ? 1 : 0)
  } else if (typeof value === 'number') {
    if (Number.isInteger(value) && value >= INT64_MIN && value < INT64_END) {
      out.tag(3, 0)
      out.varint(value)
    } else {
      out.tag(4, 1)
      out.double(value)
    }
  } else if (value instanceof Uint8Array) {
    out.tag(7, 2)
    out.bytes(value)
  } else if (Array.isArray(value)) {
    out.tag(5, 2)
    const array = out.begin()
    for (const item of value as unknown[]) {
      out.tag(1, 2)
      const start = out.begin()
      writeAnyValue(out, item)
      out.end(start)
    }
    out.end(array)
  } else if (typeof value === 'object' && value !== null) {
    out.tag(6, 2)
    const list = out.begin()
    writeAttributes(out, value as Attributes, 1)
    out.end(list)
  }
}

function truthy<T> (value: T | undefined | null | '' | 0): value is T {
  return Boolean(value)
}
