import { CallControl } from './abort.js'
import { checkInvokeOptions } from './call-options.js'
import { checkInputBounds } from './input-bounds.js'
import { askForLimits, checkApproval, pendingResult, runApproved, type ApprovalGate } from './steps/approval.js'
import { callerOf, limited } from './steps/limits.js'
import { LimitAsk } from './limits/limits.js'
import { checkIdempotencyKey, idempotent } from './steps/idempotency.js'
import { checkModeGates, checkPermission, findTool, parseInput, refuseWhenClosing, runAuthorize, runResolve } from './steps/gates.js'
import { presentationOf, scheduleAndExecute, serializeOutput } from './steps/execution.js'
import { openRecord, publish, settleFailure } from './steps/outcome.js'
import { ProgressReporter, type ProgressUpdate } from './progress.js'
import { askerFor, type ElicitationAnswer, type ElicitationRequest } from './elicitation.js'
import type { AnyTool, ToolContext, TraceContext } from './tool.js'
import type { Binding, Call, ExecutionHandle, InvokeRequest, InvokeResult, PipelineEnv } from './types.js'

export type { Binding, InvokeRequest, InvokeResult, PipelineEnv } from './types.js'

/**
 * The call pipeline from finding the tool to checking its output: the tool and its `active`,
 * the permission rules, the input, the mode gates, `authorize`, the idempotency key, a
 * concurrency slot, `execute`, `parseOutput` (authentication and the app are the caller's: they
 * arrive in `binding`; `unlisted` is a tool the caller found, not in the set). Each step is one
 * named function (`steps/`), called in order. A step that may wait returns a promise only when
 * it does wait, and only then is it awaited: a synchronous tool with a free slot runs the whole
 * pipeline without a microtask hop.
 */
export async function invoke<App> (env: PipelineEnv, binding: Binding<App>, request: InvokeRequest, unlisted?: AnyTool<App>): Promise<InvokeResult> {
  const tool = unlisted ?? findTool(env, binding, request.toolId)
  const started = performance.now()
  const record = openRecord(tool, binding, request, started)
  const control = new CallControl()
  let progress: ProgressReporter | undefined
  control.follow(binding.signal)
  control.follow(request.signal)
  env.begin(control)
  try {
    refuseWhenClosing(env)
    checkPermission(binding, tool)
    checkInvokeOptions(request)
    if (request.onProgress !== undefined) progress = new ProgressReporter(request.onProgress)
    const elicit = request.onElicit === undefined ? undefined : askerFor(request.onElicit, control)
    checkInputBounds(request.input, env.options.inputBounds)
    const input = parseInput(tool, request.input)
    checkModeGates(binding, tool, request)
    const handle: ExecutionHandle = {}
    const ctx = new CallContext(binding.app, tool.id, record.callId, control, request.escalate === true, request.dryRun === true, handle, binding.trace, progress?.report, elicit)
    const authorizing = runAuthorize(tool, input, ctx)
    if (authorizing !== undefined) await authorizing
    if (control.reason !== undefined) throw control.reason
    const approving = checkApproval(env, binding, tool, input, ctx, request)
    const approval = approving instanceof Promise ? await approving : approving
    if (approval?.type === 'pending') return pendingResult(binding, record, approval.view)
    // An approved call runs once under its approval's own key.
    const idempotencyKey = approval === undefined ? request.idempotencyKey : approval.key
    checkIdempotencyKey(tool, idempotencyKey, request.dryRun === true)
    if (request.dryRun === true) {
      const proposal = runResolve(tool, input, ctx)
      // What the call would spend: a dry run reads its limits and charges nothing.
      const limits = env.limits.of(tool).length === 0 ? undefined : await env.limits.peek(tool, input, callerOf(binding))
      record.outcome = 'dry_run'
      return { value: proposal, record, replayed: false, body: serializeOutput(binding, tool, proposal), ...(limits === undefined ? {} : { limits }) }
    }
    const call: Call<App> = { env, binding, tool, input, ctx, control, record, handle }
    try {
      const running = run(call, approval, idempotencyKey)
      return running instanceof Promise ? await running : running
    } catch (error) {
      if (!(error instanceof LimitAsk)) throw error
      // Past a limit where a person decides: the call becomes an approval, or runs on one already given.
      record.limit = error.limits[0]!.name
      record.limitAction = 'asked'
      const gate = await askForLimits(env, binding, tool, input, ctx, request, error.limits.map(limit => limit.name))
      if (gate.type === 'pending') return pendingResult(binding, record, gate.view)
      return await run(call, gate, gate.key)
    }
  } catch (error) {
    throw settleFailure(record, error)
  } finally {
    progress?.close()
    control.unfollow()
    env.end(control)
    record.durationMs = performance.now() - started
    publish(env, binding, record)
  }
}

/**
 * Charge, schedule and execute the call, then answer its output: at most once per idempotency
 * key (an approved call's key is its approval's), synchronously when nothing on the way waits.
 */
function run<App> (call: Call<App>, approval: (ApprovalGate & { type: 'approved' }) | undefined, idempotencyKey: string | undefined): InvokeResult | Promise<InvokeResult> {
  const { binding, tool, record, handle } = call
  const answer = (value: unknown, replayed: boolean): InvokeResult => {
    const body = serializeOutput(binding, tool, value)
    const content = presentationOf(binding, tool, handle.presentation)
    record.outcome = replayed ? 'replayed' : 'ok'
    const result: { -readonly [K in keyof InvokeResult]: InvokeResult[K] } = { value, record, replayed, body, waitedForApproval: approval?.waited }
    if (content !== undefined) result.content = content
    if (!replayed && handle.limits !== undefined) result.limits = handle.limits
    return result
  }
  const execute = (): unknown => limited(call, approval !== undefined, () => scheduleAndExecute(call))
  if (idempotencyKey === undefined) {
    const running = execute()
    return running instanceof Promise ? running.then(value => answer(value, false)) : answer(running, false)
  }
  const runOnce = async (): Promise<unknown> => await execute()
  return idempotent(call, idempotencyKey, approval === undefined ? runOnce : runApproved(call, approval, runOnce))
    .then(({ value, replayed }) => answer(value, replayed))
}

/** What a tool sees of its call; the signal is only materialised if the tool reads it. */
class CallContext<App> implements ToolContext<App> {
  readonly #control: CallControl
  readonly #handle: ExecutionHandle
  constructor (
    readonly app: App, readonly toolId: string, readonly callId: string, control: CallControl,
    readonly escalated: boolean, readonly dryRun: boolean, handle: ExecutionHandle, readonly trace: TraceContext | undefined,
    readonly progress: ((update: ProgressUpdate) => void) | undefined,
    readonly elicit: ((request: ElicitationRequest) => Promise<ElicitationAnswer>) | undefined,
  ) {
    this.#control = control
    this.#handle = handle
  }

  /** Set once the call holds a slot that carries one (see `ToolContext.fencingToken`). */
  get fencingToken (): number | undefined {
    return this.#handle.fencingToken
  }

  get signal (): AbortSignal {
    return this.#control.signal
  }

  /** A getter, so that `const { onAbort } = ctx` works too; the function is made only when read. */
  get onAbort (): (listener: (reason: Error) => void) => () => void {
    return listener => this.#control.listen(listener)
  }
}
