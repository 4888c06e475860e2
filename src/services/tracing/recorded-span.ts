import { diag, SpanStatusCode, type Attributes, type AttributeValue, type Exception, type HrTime, type Link, type Span, type SpanAttributes, type SpanContext, type SpanKind, type SpanStatus, type TimeInput } from '@opentelemetry/api'
import { addHrTimes, hrTime, hrTimeDuration, isAttributeValue, isTimeInput, isTimeInputHrTime, millisToHrTime, otperformance, sanitizeAttributes, type InstrumentationScope } from '@opentelemetry/core'
import type { Resource } from '@opentelemetry/resources'
import type { ReadableSpan, SpanProcessor, TimedEvent } from '@opentelemetry/sdk-trace-node'
import type { AttributeShape, OwnAttributes } from './own-attributes.js'

/*
 * A span the sampler kept, as the SDK's own span records one (the same rules for attributes,
 * limits, events, links, status, times and a second `end`), without what the SDK's span does
 * for every call on top: a processor's `onStart`, self-observability metrics, a check and a
 * copy of every attribute the gateway sets itself (`setTrusted`; those it sets on every span
 * come in blocks of a fixed shape, kept as they came, `setOwn`). It is what the gateway's
 * tracer (`tracer.ts`) hands out, and what a tool's own code sees as its active span.
 */

/** The SDK's span limits, from the OTEL_*_LIMIT settings (`tracer.ts` reads them). */
export interface SpanLimits {
  readonly attributeCount: number
  readonly attributeValueLength: number
  readonly eventCount: number
  readonly linkCount: number
  readonly attributesPerEvent: number
  readonly attributesPerLink: number
}

/** What every span of one tracer shares. */
export interface SpanSource {
  readonly resource: Resource
  readonly scope: InstrumentationScope
  readonly processor: SpanProcessor
  readonly limits: SpanLimits
}

// A span's values until it ends or is given a status, shared (each is replaced, never written into).
const NOT_ENDED = Object.freeze([0, 0]) as unknown as HrTime
const NO_DURATION = Object.freeze([-1, -1]) as unknown as HrTime
const UNSET: SpanStatus = Object.freeze({ code: SpanStatusCode.UNSET })

export class RecordedSpan implements Span, ReadableSpan {
  name: string
  readonly kind: SpanKind
  readonly parentSpanContext: SpanContext | undefined
  readonly startTime: HrTime
  endTime: HrTime = NOT_ENDED
  status: SpanStatus = UNSET
  readonly links: Link[] = []
  readonly events: TimedEvent[] = []
  duration: HrTime = NO_DURATION
  ended = false
  droppedAttributesCount = 0
  droppedEventsCount = 0
  droppedLinksCount = 0
  readonly #context: SpanContext
  readonly #source: SpanSource
  /** The attributes set one by one; with `#shaped`, what the span holds (`attributes`). */
  #plain: Attributes = {}
  /** The gateway's own attributes as they came (`setOwn`), each block's keys held by no other. */
  #shaped: OwnAttributes[] | undefined
  #attributeCount = 0
  /** The monotonic clock at the start: durations come from it, the start itself from the wall clock (as the SDK's). */
  readonly #startedAt: number
  /** The wall clock less the monotonic one at the start: a time given as `performance.now()` is moved by it (as the SDK's). */
  readonly #offset: number
  readonly #timed: boolean

  constructor (source: SpanSource, context: SpanContext, name: string, kind: SpanKind, parent: SpanContext | undefined, startTime?: TimeInput) {
    this.#source = source
    this.#context = context
    this.name = name
    this.kind = kind
    this.parentSpanContext = parent
    const now = Date.now()
    this.#startedAt = otperformance.now()
    this.#offset = now - (this.#startedAt + otperformance.timeOrigin)
    // null too, as the SDK has it: a caller's JavaScript may pass one.
    this.#timed = startTime != null
    this.startTime = this.#timed ? this.#time(startTime) : millisToHrTime(now)
  }

  get resource (): Resource {
    return this.#source.resource
  }

  get instrumentationScope (): InstrumentationScope {
    return this.#source.scope
  }

  /** Every attribute, the shaped blocks' first (in the order they came), then those set one by one. */
  get attributes (): Attributes {
    const shaped = this.#shaped
    if (shaped === undefined) return this.#plain
    const all: Attributes = {}
    for (const { shape: { keys }, values } of shaped) {
      for (let i = 0; i < keys.length; i++) all[keys[i]!] = values[i]
    }
    for (const key in this.#plain) all[key] = this.#plain[key]
    return all
  }

  /** For the encoder: the shaped blocks, written as they are, then `plainAttributes` (`otlp-protobuf.ts`). */
  get shapedAttributes (): readonly OwnAttributes[] | undefined {
    return this.#shaped
  }

  get plainAttributes (): Attributes {
    return this.#plain
  }

  spanContext (): SpanContext {
    return this.#context
  }

  isRecording (): boolean {
    return !this.ended
  }

  setAttribute (key: string, value: SpanAttributes[string]): this {
    if (value == null || this.ended) return this
    if (key.length === 0) {
      diag.warn(`Invalid attribute key: ${key}`)
      return this
    }
    if (!isAttributeValue(value)) {
      diag.warn(`Invalid attribute value set for key: ${key}`)
      return this
    }
    this.#set(key, value)
    return this
  }

  setAttributes (attributes: SpanAttributes): this {
    for (const key in attributes) {
      if (Object.hasOwn(attributes, key)) this.setAttribute(key, attributes[key])
    }
    return this
  }

  /** The gateway's own attributes: keys it wrote, values of types it chose; only the limits apply (`own-attributes.ts`). */
  setTrusted (attributes: Readonly<Record<string, AttributeValue>>): void {
    if (this.ended) return
    for (const key in attributes) this.#set(key, attributes[key]!, false)
  }

  /**
   * The gateway's attributes of one shape, kept as a block. One by one instead where the block
   * would not be kept whole and unchanged: a value length limit (values may be cut), too little
   * room left under the count limit (which of them are dropped is the SDK's rule), or a key the
   * span holds already (the later value replaces it).
   */
  setOwn (attributes: OwnAttributes): void {
    if (this.ended) return
    const { shape, values } = attributes
    const { attributeCount, attributeValueLength } = this.#source.limits
    const cuts = attributeValueLength > 0 && attributeValueLength !== Infinity
    if (cuts || this.#attributeCount + shape.keys.length > attributeCount || this.#holdsAnyOf(shape)) {
      for (let i = 0; i < values.length; i++) this.#set(shape.keys[i]!, values[i]!, false)
      return
    }
    (this.#shaped ??= []).push(attributes)
    this.#attributeCount += shape.keys.length
  }

  #holdsAnyOf (shape: AttributeShape): boolean {
    for (const key in this.#plain) {
      if (shape.has(key)) return true
    }
    return this.#shaped?.some(block => !shape.sharesNoKeyWith(block.shape)) ?? false
  }

  #set (key: string, value: AttributeValue, copy = true): void {
    // A key of a block, set again: the blocks become attributes like any other, and it is replaced.
    if (this.#shaped?.some(block => block.shape.has(key)) === true) {
      this.#plain = this.attributes
      this.#shaped = undefined
    }
    const isNew = !Object.hasOwn(this.#plain, key)
    if (isNew && this.#attributeCount >= this.#source.limits.attributeCount) {
      this.droppedAttributesCount++
      return
    }
    this.#plain[key] = this.#truncate(value, copy)
    if (isNew) this.#attributeCount++
  }

  addEvent (name: string, attributesOrTime?: Attributes | TimeInput, time?: TimeInput): this {
    if (this.ended) return this
    const { eventCount, attributesPerEvent } = this.#source.limits
    const room = makeRoom(this.events, eventCount)
    this.droppedEventsCount += room.dropped
    if (!room.fits) return this
    let attributes = attributesOrTime
    if (isTimeInput(attributesOrTime)) {
      if (!isTimeInput(time)) time = attributesOrTime
      attributes = undefined
    }
    const [kept, dropped] = this.#limited(sanitizeAttributes(attributes), attributesPerEvent)
    this.events.push({ name, attributes: kept, time: this.#time(time), droppedAttributesCount: dropped })
    return this
  }

  addLink (link: Link): this {
    if (this.ended) return this
    const { linkCount, attributesPerLink } = this.#source.limits
    const room = makeRoom(this.links, linkCount)
    this.droppedLinksCount += room.dropped
    if (!room.fits) return this
    const [kept, dropped] = this.#limited(sanitizeAttributes(link.attributes), attributesPerLink)
    this.links.push({
      context: link.context,
      ...(Object.keys(kept).length > 0 ? { attributes: kept } : {}),
      ...(dropped > 0 ? { droppedAttributesCount: dropped } : {}),
    })
    return this
  }

  addLinks (links: Link[]): this {
    for (const link of links) this.addLink(link)
    return this
  }

  /** UNSET changes nothing and OK is final, as the specification has it; only ERROR keeps a message. */
  setStatus (status: SpanStatus): this {
    if (this.ended || status.code === SpanStatusCode.UNSET || this.status.code === SpanStatusCode.OK) return this
    this.status = status.code === SpanStatusCode.ERROR && typeof status.message === 'string' ? { code: status.code, message: status.message } : { code: status.code }
    return this
  }

  updateName (name: string): this {
    if (!this.ended) this.name = name
    return this
  }

  end (endTime?: TimeInput): void {
    if (this.ended) {
      diag.error(`${this.name} ${this.#context.traceId}-${this.#context.spanId} - You can only call end() on a span once.`)
      return
    }
    this.endTime = this.#time(endTime)
    this.duration = hrTimeDuration(this.startTime, this.endTime)
    if (this.duration[0] < 0) {
      this.endTime = [...this.startTime]
      this.duration = [0, 0]
    }
    this.ended = true
    this.#source.processor.onEnd(this)
  }

  /** By the SDK's rules, truthiness included: whatever a tool's code throws, null and numbers too. */
  recordException (exception: Exception, time?: TimeInput): void {
    const attributes: Attributes = {}
    const thrown = exception as unknown
    if (typeof thrown === 'string') {
      attributes['exception.message'] = thrown
    } else if (typeof thrown === 'object' && thrown !== null) {
      const { code, name, message, stack } = thrown as { code?: unknown, name?: unknown, message?: unknown, stack?: unknown }
      if (truthy(code)) attributes['exception.type'] = String(code)
      else if (truthy(name)) attributes['exception.type'] = name as string
      if (truthy(message)) attributes['exception.message'] = message as string
      if (truthy(stack)) attributes['exception.stacktrace'] = stack as string
    }
    if (truthy(attributes['exception.type']) || truthy(attributes['exception.message'])) this.addEvent('exception', attributes, time)
  }

  /** A time given (epoch or performance milliseconds, a Date, an HrTime), else now as start plus what the monotonic clock measured. */
  #time (input: TimeInput | undefined): HrTime {
    if (typeof input === 'number') return input <= otperformance.now() ? hrTime(input + this.#offset) : millisToHrTime(input)
    if (input instanceof Date) return millisToHrTime(input.getTime())
    if (isTimeInputHrTime(input)) return input
    if (this.#timed) return millisToHrTime(Date.now())
    return addHrTimes(this.startTime, millisToHrTime(otperformance.now() - this.#startedAt))
  }

  /**
   * A value as the span keeps it, as the SDK's: strings cut at the length limit (none at 0 or
   * less), an array always copied (the caller's array may change after), `copy` false only for
   * the gateway's own arrays, which nothing changes.
   */
  #truncate (value: AttributeValue, copy = true): AttributeValue {
    const limit = this.#source.limits.attributeValueLength
    if (limit <= 0) return value
    if (typeof value === 'string') return value.length > limit ? value.slice(0, limit) : value
    if (!Array.isArray(value) || (!copy && limit === Infinity)) return value
    return value.map(item => typeof item === 'string' && item.length > limit ? item.slice(0, limit) : item) as AttributeValue
  }

  #limited (attributes: Attributes, limit: number): [Attributes, number] {
    const kept: Attributes = {}
    let count = 0
    let dropped = 0
    for (const key in attributes) {
      if (!Object.hasOwn(attributes, key)) continue
      if (count >= limit) {
        dropped++
        continue
      }
      kept[key] = this.#truncate(attributes[key]!)
      count++
    }
    return [kept, dropped]
  }
}

/** Room for one more event or link: none at a limit of 0 (the new one is dropped), else the oldest makes way at the limit. */
function makeRoom (list: unknown[], limit: number): { readonly dropped: number, readonly fits: boolean } {
  if (limit === 0) return { dropped: 1, fits: false }
  if (list.length < limit) return { dropped: 0, fits: true }
  list.shift()
  return { dropped: 1, fits: true }
}

function truthy (value: unknown): boolean {
  return Boolean(value)
}
