import { context as contexts, INVALID_SPAN_CONTEXT, SpanKind, trace, TraceFlags, type Attributes, type Context, type Link, type Span, type SpanOptions, type Tracer } from '@opentelemetry/api'
import { isTracingSuppressed, sanitizeAttributes } from '@opentelemetry/core'
import { SamplingDecision, type IdGenerator, type Sampler } from '@opentelemetry/sdk-trace-node'
import { RecordedSpan, type SpanSource } from './recorded-span.js'
import { GatewaySpanContext, isValidParent } from './samplers.js'

/*
 * The gateway's tracer: the SDK tracer's decisions (a root or a child of the parent in the
 * context, the sampler asked once, a span the sampler drops only carries its context on), with
 * the gateway's own span (`recorded-span.ts`) for what is kept. A span left out costs its ids and
 * one small object: at a ratio of 0.1 that is nine calls in ten.
 */

/** No attributes and no links at the start (every span the gateway opens): one object for all, never written. */
const NONE: Attributes = Object.freeze({})
const NO_LINKS: readonly Link[] = Object.freeze([])

export class GatewayTracer implements Tracer {
  readonly #source: SpanSource
  readonly #sampler: Sampler
  readonly #ids: IdGenerator

  constructor (source: SpanSource, sampler: Sampler, ids: IdGenerator) {
    this.#source = source
    this.#sampler = sampler
    this.#ids = ids
  }

  startSpan (name: string, options: SpanOptions = {}, context: Context = contexts.active()): Span {
    if (options.root === true) context = trace.deleteSpan(context)
    if (isTracingSuppressed(context)) return trace.wrapSpanContext(INVALID_SPAN_CONTEXT)
    const parent = trace.getSpanContext(context)
    const child = parent !== undefined && isValidParent(parent) ? parent : undefined
    const spanId = this.#ids.generateSpanId()
    const traceId = child?.traceId ?? this.#ids.generateTraceId()
    const kind = options.kind ?? SpanKind.INTERNAL
    const links: readonly Link[] = options.links === undefined ? NO_LINKS : options.links.map(link => ({ context: link.context, attributes: sanitizeAttributes(link.attributes) }))
    const attributes = options.attributes === undefined ? NONE : sanitizeAttributes(options.attributes)
    const sampled = this.#sampler.shouldSample(context, traceId, name, kind, attributes, links as Link[])
    const spanContext = new GatewaySpanContext(traceId, spanId,
      sampled.decision === SamplingDecision.RECORD_AND_SAMPLED ? TraceFlags.SAMPLED : TraceFlags.NONE,
      sampled.traceState ?? child?.traceState)
    if (sampled.decision === SamplingDecision.NOT_RECORD) return trace.wrapSpanContext(spanContext)
    const span = new RecordedSpan(this.#source, spanContext, name, kind, child, options.startTime)
    for (const link of links) span.addLink(link)
    span.setAttributes(attributes)
    if (sampled.attributes !== undefined) span.setAttributes(sampled.attributes)
    return span
  }

  startActiveSpan<F extends (span: Span) => unknown>(name: string, fn: F): ReturnType<F>
  startActiveSpan<F extends (span: Span) => unknown>(name: string, options: SpanOptions, fn: F): ReturnType<F>
  startActiveSpan<F extends (span: Span) => unknown>(name: string, options: SpanOptions, context: Context, fn: F): ReturnType<F>
  startActiveSpan<F extends (span: Span) => unknown>(name: string, ...rest: [F] | [SpanOptions, F] | [SpanOptions, Context, F]): ReturnType<F> {
    const fn = rest.at(-1) as F
    const options = rest.length > 1 ? rest[0] as SpanOptions : undefined
    // An undefined context (the SDK's callers pass one) is the active one.
    const parent = (rest.length > 2 ? rest[1] as Context | undefined : undefined) ?? contexts.active()
    const span = this.startSpan(name, options, parent)
    return contexts.with(trace.setSpan(parent, span), () => fn(span) as ReturnType<F>)
  }
}
