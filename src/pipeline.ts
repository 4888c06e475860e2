import { CallControl, type CancelSignal } from './abort.js'
import type { CallRecord } from './call-record.js'
import type { CoreOptions } from './core-options.js'
import { checkIdempotencyKey, idempotent, type IdempotencyOptions } from './idempotency/step.js'
import type { Scheduler } from './scheduler.js'
import { checkModeGates, checkPermission, findTool, parseInput, refuseWhenClosing, runAuthorize, runResolve } from './steps/admission.js'
import { scheduleAndExecute, serializeOutput } from './steps/execution.js'
import { openRecord, publish, settleFailure } from './steps/outcome.js'
import type { AnyTool, ToolContext } from './tool.js'

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
  readonly onRecord?: (record: CallRecord) => void
  /**
   * The transport's encoding of a result (JSON for HTTP). Run inside the pipeline so that a
   * value the transport cannot carry (circular, too large) is the tool's invalid output, a 502
   * in the record and the metrics, not a crash after the call was counted as ok.
   */
  readonly serialize?: (value: unknown) => string
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

/**
 * The call pipeline of CONTRACT section 2, steps 2 to 11 (authentication and the app are the
 * caller's: they arrive in `binding`). Each step is one named function (`steps/`), called in
 * order. A step that may wait returns a promise only when it does wait, and only then is it
 * awaited: a synchronous tool with a free slot runs the whole pipeline without a microtask hop.
 */
export async function invoke<App> (env: PipelineEnv, binding: Binding<App>, request: InvokeRequest): Promise<InvokeResult> {
  const tool = findTool(env, binding, request.toolId)
  const started = performance.now()
  const record = openRecord(tool, binding, request, started)
  const control = new CallControl()
  control.follow(binding.signal)
  control.follow(request.signal)
  env.begin(control)
  try {
    refuseWhenClosing(env)
    checkPermission(binding, tool)
    const input = parseInput(tool, request.input)
    checkModeGates(binding, tool, request)
    const ctx = new CallContext(binding.app, tool.id, record.callId, control, request.escalate === true, request.dryRun === true)
    const authorizing = runAuthorize(tool, input, ctx)
    if (authorizing !== undefined) await authorizing
    if (control.reason !== undefined) throw control.reason
    checkIdempotencyKey(tool, request.idempotencyKey, request.dryRun === true)
    if (request.dryRun === true) {
      const proposal = runResolve(tool, input, ctx)
      record.outcome = 'dry_run'
      return { value: proposal, record, replayed: false, body: serializeOutput(binding, tool, proposal) }
    }
    if (request.idempotencyKey === undefined) {
      const running = scheduleAndExecute(env, binding, tool, input, ctx, control, record, {})
      const value = running instanceof Promise ? await running : running
      const body = serializeOutput(binding, tool, value)
      record.outcome = 'ok'
      return { value, record, replayed: false, body }
    }
    const { value, replayed } = await idempotent(env.idempotency, binding.idempotencyScope, tool, request.idempotencyKey, input, record,
      async handle => await scheduleAndExecute(env, binding, tool, input, ctx, control, record, handle))
    const body = serializeOutput(binding, tool, value)
    record.outcome = replayed ? 'replayed' : 'ok'
    return { value, record, replayed, body }
  } catch (error) {
    throw settleFailure(record, error)
  } finally {
    control.unfollow()
    env.end(control)
    record.durationMs = performance.now() - started
    publish(env, binding, record)
  }
}

/** What a tool sees of its call; the signal is only materialised if the tool reads it. */
class CallContext<App> implements ToolContext<App> {
  readonly #control: CallControl
  constructor (
    readonly app: App, readonly toolId: string, readonly callId: string, control: CallControl,
    readonly escalated: boolean, readonly dryRun: boolean,
  ) {
    this.#control = control
  }

  get signal (): AbortSignal {
    return this.#control.signal
  }
}
