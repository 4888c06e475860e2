/*
 * The types the pipeline and its steps share, in one module that holds nothing else: steps
 * import from here, never from `pipeline.ts`, so the pipeline depends on its steps and not
 * the other way round.
 */
import type { CallControl, CancelSignal } from './abort.js'
import type { CallRecord } from './call-record.js'
import type { IdempotencyStore } from './idempotency/store.js'
import type { CoreOptions } from './options.js'
import type { Scheduler } from './scheduler.js'
import type { Settled } from './steps/run-execute.js'
import type { AnyTool, ToolContext, TraceContext } from './tool.js'

export interface IdempotencyOptions {
  readonly store: IdempotencyStore
  readonly ttlMs: number
}

/** What the catalog shares with every call. */
export interface PipelineEnv {
  readonly tools: ReadonlyMap<string, AnyTool>
  readonly scheduler: Scheduler
  /** Per-tool limits across domains (only tools with a configured limit use it). */
  readonly toolScheduler: Scheduler
  readonly options: CoreOptions
  readonly isClosing: () => boolean
  /** In-flight bookkeeping, so shutdown can wait for calls and then abort them. */
  readonly begin: (control: CallControl) => void
  readonly end: (control: CallControl) => void
  readonly observers: ReadonlyArray<(record: CallRecord) => void>
  readonly idempotency: IdempotencyOptions
}

/** One bound context: the app, and what the host decided about this caller. */
export interface Binding<App> {
  readonly app: App
  readonly signal?: CancelSignal
  readonly domain: string
  /** Whose idempotency keys these are: keys of different scopes never meet. */
  readonly idempotencyScope: string
  readonly planMode: boolean
  readonly escalationApproved: boolean
  readonly isPermitted?: (tool: AnyTool<App>) => boolean
  /** Told of every settled call of this binding, success or failure: where a host logs it. */
  readonly onRecord?: (record: CallRecord) => void
  /**
   * The transport's encoding of a result (JSON for HTTP). Run inside the pipeline so that a
   * value the transport cannot carry (circular, too large) is the tool's invalid output, a 502
   * in the record and the metrics, not a crash after the call was counted as ok.
   */
  readonly serialize?: (value: unknown) => string
  /** The host's trace context of this call, handed to the tool as `ctx.trace`. */
  readonly trace?: TraceContext
}

export interface InvokeRequest {
  readonly toolId: string
  readonly input: unknown
  /** Validate and authorize, then return `resolve(input)`; nothing executes. */
  readonly dryRun?: boolean
  /** Ask to escalate: needs `supportsEscalation` and the binding's approval. */
  readonly escalate?: boolean
  /** Aborts this call only (the binding's signal aborts every call of the binding). */
  readonly signal?: CancelSignal
  /** Run at most once per key (and scope and tool); a repeat replays the stored answer. */
  readonly idempotencyKey?: string
}

export interface InvokeResult<T = unknown> {
  readonly value: T
  readonly record: CallRecord
  /** True when the value is a stored answer to an earlier call with the same idempotency key. */
  readonly replayed: boolean
  /** `value` encoded by the binding's `serialize`, when it has one. */
  readonly body?: string
}

/** What the execute step tells the idempotency step: a late settlement when the call was aborted mid-run. */
export interface ExecutionHandle {
  late?: Promise<Settled>
}

/** One call past its gates: everything the scheduling and execution steps need, in one value. */
// eslint-disable-next-line @typescript-eslint/no-explicit-any -- a call of any app, like AnyTool
export interface Call<App = any> {
  readonly env: PipelineEnv
  readonly binding: Binding<App>
  readonly tool: AnyTool<App>
  readonly input: unknown
  readonly ctx: ToolContext<App>
  readonly control: CallControl
  readonly record: CallRecord
  readonly handle: ExecutionHandle
}
