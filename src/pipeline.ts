import { randomUUID } from 'node:crypto'
import { AbortReason, CallControl, type CancelSignal } from './abort.js'
import type { CallRecord } from './call-record.js'
import type { CoreOptions } from './core-options.js'
import { ERRORS, GatewayError, ToolError, ToolgateError } from './errors.js'
import { toInputIssues } from './input-issues.js'
import { checkIdempotencyKey, idempotent, type ExecutionHandle, type IdempotencyOptions } from './idempotency/step.js'
import { acquireSlot, concurrencyClassOf, runExecute } from './run-execute.js'
import type { Lease, Scheduler } from './scheduler.js'
import type { AnyTool, DebugStep, ToolContext } from './tool.js'

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
 * caller's: they arrive in `binding`). Each step is one function below, in call order.
 */
export async function invoke<App> (env: PipelineEnv, binding: Binding<App>, request: InvokeRequest): Promise<InvokeResult> {
  const tool = findTool(env, binding, request.toolId)
  const record = openRecord(tool, binding, request)
  const started = performance.now()
  const control = new CallControl()
  const unlinkBinding = control.follow(binding.signal)
  const unlinkRequest = control.follow(request.signal)
  env.begin(control)
  try {
    refuseWhenClosing(env)
    checkPermission(binding, tool)
    const input = parseInput(tool, request.input)
    checkModeGates(binding, tool, request)
    const ctx = new CallContext(binding.app, tool.id, record.callId, control, request.escalate === true, request.dryRun === true)
    await runAuthorize(tool, input, ctx)
    if (control.reason !== undefined) throw control.reason
    checkIdempotencyKey(tool, request.idempotencyKey, request.dryRun === true)
    if (request.dryRun === true) {
      const proposal = runResolve(tool, input, ctx)
      record.outcome = 'dry_run'
      return { value: proposal, record, replayed: false, body: serializeOutput(binding, tool, proposal) }
    }
    if (request.idempotencyKey === undefined) {
      const value = await scheduleAndExecute(env, binding, tool, input, ctx, control, record, {})
      const body = serializeOutput(binding, tool, value)
      record.outcome = 'ok'
      return { value, record, replayed: false, body }
    }
    const { value, replayed } = await idempotent(env.idempotency, binding.idempotencyScope, tool, request.idempotencyKey, input, record,
      handle => scheduleAndExecute(env, binding, tool, input, ctx, control, record, handle))
    const body = serializeOutput(binding, tool, value)
    record.outcome = replayed ? 'replayed' : 'ok'
    return { value, record, replayed, body }
  } catch (error) {
    throw settleFailure(record, error)
  } finally {
    unlinkBinding()
    unlinkRequest()
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

function findTool<App> (env: PipelineEnv, binding: Binding<App>, toolId: string): AnyTool<App> {
  const tool = env.tools.get(toolId)
  if (tool === undefined || (tool.active !== undefined && !isActive(tool, binding.app))) {
    throw new GatewayError('TOOLGATE_NOT_FOUND', `no tool "${toolId}"`)
  }
  return tool
}

/** A throwing `active` is a defect of the tool; it reads as inactive rather than failing every listing. */
function isActive<App> (tool: AnyTool<App>, app: App): boolean {
  try {
    return tool.active!(app) === true
  } catch {
    return false
  }
}

function openRecord<App> (tool: AnyTool<App>, binding: Binding<App>, request: InvokeRequest): CallRecord {
  return {
    callId: randomUUID(), toolId: tool.id, kind: tool.kind, effects: tool.effects, effectsLabel: tool.effectsLabel,
    readOnly: tool.isReadOnly, domain: binding.domain, outcome: 'internal', status: 200,
    dryRun: request.dryRun === true, escalated: request.escalate === true, executed: false,
    startedAt: Date.now(), queueMs: 0, executeMs: 0, durationMs: 0,
    touchedResources: [], mutatedResources: [], debugSteps: [],
  }
}

function refuseWhenClosing (env: PipelineEnv): void {
  if (env.isClosing()) throw new GatewayError('TOOLGATE_UNAVAILABLE', 'the gateway is shutting down', { retryAfter: 5 })
}

function checkPermission<App> (binding: Binding<App>, tool: AnyTool<App>): void {
  if (binding.isPermitted !== undefined && !binding.isPermitted(tool)) {
    throw new GatewayError('TOOLGATE_FORBIDDEN', `this principal may not call "${tool.id}"`)
  }
}

function parseInput (tool: AnyTool, raw: unknown): unknown {
  const parsed = tool.inputSchema.safeParse(raw)
  if (!parsed.success) {
    throw new GatewayError('TOOLGATE_INVALID_INPUT', `the input of "${tool.id}" does not match its schema`, { errors: toInputIssues(parsed.error) })
  }
  return parsed.data
}

function checkModeGates<App> (binding: Binding<App>, tool: AnyTool<App>, request: InvokeRequest): void {
  if (binding.planMode && !tool.isReadOnly) {
    throw new GatewayError('TOOLGATE_PLAN_MODE', `"${tool.id}" is not read-only and plan mode runs read-only tools only`)
  }
  if (request.escalate === true) {
    if (tool.supportsEscalation !== true) throw new GatewayError('TOOLGATE_ESCALATION_UNSUPPORTED', `"${tool.id}" does not support escalation`)
    if (!binding.escalationApproved) throw new GatewayError('TOOLGATE_ESCALATION_NOT_APPROVED', `escalating "${tool.id}" needs an explicit approval`)
  }
}

/** `authorize` denies by throwing; settling with anything but `undefined` is a tool defect. */
async function runAuthorize<App> (tool: AnyTool<App>, input: unknown, ctx: ToolContext<App>): Promise<void> {
  let result: unknown
  try {
    result = await tool.authorize(input, ctx)
  } catch (thrown) {
    if (thrown instanceof ToolgateError) throw thrown
    throw new GatewayError('TOOLGATE_DENIED', thrown instanceof Error && thrown.message !== '' ? thrown.message : `"${tool.id}" refused this call`)
  }
  if (result !== undefined) {
    throw new GatewayError('TOOLGATE_TOOL_BAD_DEFINITION', `authorize of "${tool.id}" settled with ${describe(result)}; it must settle with undefined and deny by throwing`)
  }
}

function runResolve<App> (tool: AnyTool<App>, input: unknown, ctx: ToolContext<App>): unknown {
  if (tool.resolve === undefined) return input
  try {
    return tool.resolve(input, ctx)
  } catch (thrown) {
    if (thrown instanceof ToolError) throw thrown
    throw new GatewayError('TOOLGATE_DRY_RUN_REJECTED', thrown instanceof Error ? thrown.message : `"${tool.id}" rejected this input`)
  }
}

async function scheduleAndExecute<App> (
  env: PipelineEnv, binding: Binding<App>, tool: AnyTool<App>, input: unknown, ctx: ToolContext<App>,
  control: CallControl, record: CallRecord, handle: ExecutionHandle,
): Promise<unknown> {
  const { options } = env
  const queuedAt = performance.now()
  const lease = await acquireSlots(env, binding, tool, control)
  if (control.reason !== undefined) {
    lease.release()
    throw control.reason
  }
  const executeAt = performance.now()
  record.queueMs = executeAt - queuedAt
  record.executed = true
  record.touchedResources = resourcesOf(tool.touchedResourcesOf, input)
  record.mutatedResources = resourcesOf(tool.mutatedResourcesOf, input)
  const execution = await runExecute(tool, input, ctx, control, tool.timeoutMs ?? options.defaultTimeoutMs, lease, options.abandonGraceMs)
  record.executeMs = performance.now() - executeAt
  if (execution.type === 'aborted') {
    handle.late = execution.late
    throw execution.reason
  }
  if (execution.type === 'thrown') throw toolFailure(tool, execution.thrown)
  const output = parseOutput(tool, execution.value)
  record.debugSteps = collectDebugSteps(tool, output)
  return output
}

/**
 * The tool's own limit first (when configured), then the domain's slot. Always in that order,
 * so two calls can never each hold what the other waits for.
 */
async function acquireSlots<App> (env: PipelineEnv, binding: Binding<App>, tool: AnyTool<App>, control: CallControl): Promise<Lease> {
  const { queueTimeoutMs, toolLimits } = env.options
  const limit = toolLimits[tool.id]
  if (limit === undefined) return await acquireSlot(env.scheduler, binding.domain, concurrencyClassOf(tool), control, queueTimeoutMs)
  const toolLease = await acquireSlot(env.toolScheduler, `tool:${tool.id}`, { type: 'group', toolId: tool.id, limit: limit.maxInFlight }, control, queueTimeoutMs, limit.maxQueue)
  try {
    const domainLease = await acquireSlot(env.scheduler, binding.domain, concurrencyClassOf(tool), control, queueTimeoutMs)
    return { release: () => { domainLease.release(); toolLease.release() } }
  } catch (error) {
    toolLease.release()
    throw error
  }
}

/** Malformed input gives `[]`, by the contract of `touchedResourcesOf` / `mutatedResourcesOf`. */
function resourcesOf (of: ((input: unknown) => readonly string[]) | undefined, input: unknown): readonly string[] {
  if (of === undefined) return []
  try {
    const resources = of(input)
    return Array.isArray(resources) && resources.every(r => typeof r === 'string') ? resources : []
  } catch {
    return []
  }
}

/** A `ToolError` is the tool failing on purpose; anything else is a 500 with no internals. */
function toolFailure (tool: AnyTool, thrown: unknown): ToolgateError {
  if (thrown instanceof ToolError) return thrown
  return new GatewayError('TOOLGATE_TOOL_FAILED', `"${tool.id}" failed`, {}, { cause: thrown })
}

function parseOutput (tool: AnyTool, value: unknown): unknown {
  try {
    return tool.parseOutput(value)
  } catch (thrown) {
    throw new GatewayError('TOOLGATE_INVALID_OUTPUT', `"${tool.id}" returned output that does not match its schema`, {}, { cause: thrown })
  }
}

function serializeOutput<App> (binding: Binding<App>, tool: AnyTool<App>, value: unknown): string | undefined {
  if (binding.serialize === undefined) return undefined
  try {
    return binding.serialize(value)
  } catch (thrown) {
    throw new GatewayError('TOOLGATE_INVALID_OUTPUT', `"${tool.id}" returned output the transport cannot carry: ${thrown instanceof Error ? thrown.message : 'unserializable'}`, {}, { cause: thrown })
  }
}

function collectDebugSteps (tool: AnyTool, output: unknown): DebugStep[] {
  if (tool.debugSteps === undefined) return []
  const steps: DebugStep[] = []
  try {
    tool.debugSteps(output, { step: (name, data) => { steps.push({ name, data }) } })
  } catch (thrown) {
    steps.push({ name: 'debugSteps failed', data: thrown instanceof Error ? thrown.message : String(thrown) })
  }
  return steps
}

/** Turn whatever ended the call into a `ToolgateError` and write its outcome into the record. */
function settleFailure (record: CallRecord, error: unknown): ToolgateError {
  const failure = error instanceof AbortReason ? abortFailure(record, error) : error instanceof ToolgateError ? error : new GatewayError('TOOLGATE_INTERNAL', undefined, {}, { cause: error })
  record.status = failure.status
  record.code = failure.code
  record.failure = error
  record.outcome = failure instanceof GatewayError ? ERRORS[failure.code].outcome : 'tool_error'
  if (failure.extensions.outcome === 'unknown') record.outcome = 'unknown'
  if ((failure as { replayed?: boolean }).replayed === true) record.outcome = 'replayed'
  ;(failure as { record?: CallRecord }).record = record
  return failure
}

/** Timeout, cancel and shutdown; once a non-read-only tool began, its effect is unknown. */
function abortFailure (record: CallRecord, reason: AbortReason): GatewayError {
  const unknown = record.executed && !record.readOnly
  const extensions = unknown ? { outcome: 'unknown' } : {}
  const suffix = unknown ? '; the tool may or may not have taken effect: check before retrying' : ''
  if (reason.kind === 'timeout') return new GatewayError('TOOLGATE_TIMEOUT', reason.message + suffix, extensions)
  if (reason.kind === 'shutdown') return new GatewayError('TOOLGATE_UNAVAILABLE', reason.message + suffix, { ...extensions, retryAfter: 5 })
  return new GatewayError('TOOLGATE_CANCELLED', reason.message + suffix, extensions)
}

function publish<App> (env: PipelineEnv, binding: Binding<App>, record: CallRecord): void {
  for (const observer of env.observers) safely(observer, record)
  if (binding.onRecord !== undefined) safely(binding.onRecord, record)
}

/** An observer that throws must not turn a finished call into a failure. */
function safely (observer: (record: CallRecord) => void, record: CallRecord): void {
  try {
    observer(record)
  } catch { /* observers are telemetry: losing one record beats failing the call */ }
}

function describe (value: unknown): string {
  if (typeof value === 'string') return `the string ${JSON.stringify(value.slice(0, 40))}`
  if (value === null || typeof value !== 'object') return String(value)
  return Array.isArray(value) ? 'an array' : 'an object'
}
