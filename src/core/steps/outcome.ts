import { AbortReason } from '../abort.js'
import { NONE, type CallRecord } from '../call-record.js'
import { ERRORS, GatewayError, ToolgateError } from '../errors.js'
import { newId } from '../ids.js'
import type { Binding, InvokeRequest, PipelineEnv } from '../types.js'
import type { AnyTool } from '../tool.js'

/* The call's record: opened when the tool is known, settled on failure, published once. */

/** `started` is the call's `performance.now()`; the epoch time is derived from it, not read again. */
export function openRecord<App> (tool: AnyTool<App>, binding: Binding<App>, request: InvokeRequest, started: number): CallRecord {
  return {
    callId: newId(), toolId: tool.id, kind: tool.kind, effects: tool.effects, effectsLabel: tool.effectsLabel,
    readOnly: tool.isReadOnly, domain: binding.domain, outcome: 'internal', status: 200,
    dryRun: request.dryRun === true, escalated: request.escalate === true, executed: false,
    startedAt: Math.floor(performance.timeOrigin + started), queueMs: 0, executeMs: 0, durationMs: 0,
    touchedResources: NONE, mutatedResources: NONE, debugSteps: NONE,
    transport: binding.transport, bundle: binding.bundle, trace: binding.trace,
  }
}

/** Turn whatever ended the call into a `ToolgateError` and write its outcome into the record. */
export function settleFailure (record: CallRecord, error: unknown): ToolgateError {
  const failure = error instanceof AbortReason ? abortFailure(record, error) : error instanceof ToolgateError ? error : new GatewayError('TOOLGATE_INTERNAL', undefined, {}, { cause: error })
  record.status = failure.status
  record.code = failure.code
  record.failure = error
  record.outcome = failure instanceof GatewayError ? ERRORS[failure.code].outcome : 'tool_error'
  if (failure.extensions.outcome === 'unknown') record.outcome = 'unknown'
  if (failure.replayed) record.outcome = 'replayed'
  const limit = failure.extensions.limit as { name?: unknown } | undefined
  if (failure instanceof GatewayError && failure.code.startsWith('TOOLGATE_LIMIT_') && typeof limit?.name === 'string') {
    record.limit = limit.name
    record.limitAction = 'refused'
  }
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

export function publish<App> (env: PipelineEnv, binding: Binding<App>, record: CallRecord): void {
  for (const observer of env.observers) safely(observer, record)
  if (binding.onRecord !== undefined) safely(binding.onRecord, record)
}

/** An observer that throws must not turn a finished call into a failure. */
function safely (observer: (record: CallRecord) => void, record: CallRecord): void {
  try {
    observer(record)
  } catch { /* observers are telemetry: losing one record beats failing the call */ }
}
