import { context, SpanKind, SpanStatusCode, trace, type Context, type Span, type SpanOptions, type Tracer } from '@opentelemetry/api'
import type { CallRecord } from '../../core/call-record.js'
import type { AnyTool, TraceContext } from '../../core/tool.js'
import { AttributeShape, fixedAttributes, setShapedAttributes, type OwnAttributes } from './own-attributes.js'

/*
 * The span of one tool call, after the OpenTelemetry GenAI conventions for tool execution
 * (`execute_tool {name}`, kind INTERNAL, `gen_ai.*`), plus the declaration and what the
 * pipeline decided under `toolgate.*`. The gen_ai names are still "development" in the
 * semantic-conventions package (its incubating entry point), so they are spelled out here.
 */

/** The declaration's span name and attributes, made once per tool rather than once per call. */
export interface ToolSpanFacts {
  readonly name: string
  readonly attributes: OwnAttributes
  /** The tool's own route on the server span, by the pattern of the route that served it (`/tools/:id` -> `/tools/get_weather`). */
  readonly routes: Map<string, string>
}

export function toolSpanFacts (tool: AnyTool): ToolSpanFacts {
  return Object.freeze({
    name: `execute_tool ${tool.id}`,
    routes: new Map<string, string>(),
    attributes: fixedAttributes({
      'gen_ai.operation.name': 'execute_tool',
      'gen_ai.tool.name': tool.id,
      'gen_ai.tool.type': 'function',
      'toolgate.tool.kind': tool.kind,
      'toolgate.tool.effects': Object.freeze([...tool.effects]) as string[],
      'toolgate.tool.read_only': tool.isReadOnly,
      'toolgate.tool.concurrency_safe': tool.isConcurrencySafe,
    }),
  })
}

const INTERNAL: SpanOptions = Object.freeze({ kind: SpanKind.INTERNAL })

/** What the pipeline decided, on every call's span. */
const OUTCOME = new AttributeShape([
  'gen_ai.tool.call.id', 'toolgate.outcome', 'toolgate.status', 'toolgate.executed', 'toolgate.queue_wait_ms',
  'toolgate.execute_ms', 'toolgate.idempotent_replay', 'toolgate.dry_run', 'toolgate.escalated',
])

/** Outcomes that are not failures of the call (the span keeps status UNSET, as the spec asks). */
const SUCCESS = new Set(['ok', 'dry_run', 'replayed'])

export class CallSpan {
  readonly span: Span
  /** The span as W3C headers, for the tool's own outgoing calls (`ctx.trace`). */
  readonly headers: TraceContext
  readonly #parent: Context
  /** Whether the tool's code runs with this span as the active one (a context manager is installed). */
  readonly #active: boolean

  constructor (tracer: Tracer, tool: ToolSpanFacts, parent: Context, active: boolean) {
    this.#parent = parent
    this.#active = active
    // The declaration's attributes are set once the span is known to record: handed to
    // `startSpan`, they would be checked and copied also for a span the sampler leaves out.
    // (The samplers toolgate configures decide on the trace id and the parent, never on attributes.)
    this.span = tracer.startSpan(tool.name, INTERNAL, parent)
    if (this.span.isRecording()) setShapedAttributes(this.span, tool.attributes)
    const { traceId, spanId, traceFlags, traceState } = this.span.spanContext()
    const traceparent = `00-${traceId}-${spanId}-${traceFlags === 1 ? '01' : traceFlags === 0 ? '00' : traceFlags.toString(16).padStart(2, '0')}`
    const tracestate = traceState?.serialize()
    this.headers = tracestate === undefined || tracestate === '' ? { traceparent } : { traceparent, tracestate }
  }

  /**
   * Run the call: where a context manager is installed (TRACE_ACTIVE_SPAN, or a host's own),
   * inside `parent` with this span active, so the tool's own code sees it as OpenTelemetry's
   * active span; without one, no context is made at all (nothing could read it).
   */
  run<T> (call: () => T): T {
    return this.#active ? context.with(trace.setSpan(this.#parent, this.span), call) : call()
  }

  get traceId (): string {
    return this.span.spanContext().traceId
  }

  get spanId (): string {
    return this.span.spanContext().spanId
  }

  /** Close the span with what the pipeline recorded. */
  end (record: CallRecord, approvalId?: string): void {
    const span = this.span
    // A span the sampler left out records nothing: spare it the attribute objects.
    if (!span.isRecording()) {
      span.end()
      return
    }
    setShapedAttributes(span, {
      shape: OUTCOME,
      values: [record.callId, record.outcome, record.status, record.executed, record.queueMs, record.executeMs, record.outcome === 'replayed', record.dryRun, record.escalated],
    })
    // Approvals are built on another branch: whoever wires them passes the id here.
    if (approvalId !== undefined) span.setAttribute('toolgate.approval_id', approvalId)
    if (record.bundle !== undefined) span.setAttribute('toolgate.bundle', record.bundle)
    if (record.mutatedResources.length > 0) span.setAttribute('toolgate.mutated_resources', [...record.mutatedResources])
    if (!SUCCESS.has(record.outcome)) {
      // error.type: the stable machine code (TOOLGATE_TIMEOUT, a tool's own code, ...).
      const type = record.code ?? record.outcome
      span.setAttribute('error.type', type)
      span.setStatus({ code: SpanStatusCode.ERROR, message: type })
    }
    span.end()
  }
}
