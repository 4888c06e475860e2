import type { DebugStep, Effect } from './tool.js'

/**
 * How a call ended, one value per pipeline result. These are the `outcome` metrics label
 * values, so they are a closed set: adding one is a deliberate change.
 */
export const OUTCOMES = [
  'ok', 'dry_run', 'replayed', 'approval_pending',
  'invalid_input', 'unauthenticated', 'forbidden', 'not_found', 'conflict', 'rate_limited',
  'unavailable', 'timeout', 'cancelled', 'unknown',
  'tool_error', 'tool_failed', 'bad_definition', 'invalid_output', 'internal',
] as const
export type Outcome = (typeof OUTCOMES)[number]

/** The empty list every record starts with and most keep: one frozen array, not one per call. */
export const NONE: readonly never[] = Object.freeze([])

/** The audit record of one call: what the caller (logs, metrics, audit) reads after it settles. */
export interface CallRecord {
  readonly callId: string
  readonly toolId: string
  readonly kind: string
  readonly effects: readonly Effect[]
  readonly effectsLabel: string
  readonly readOnly: boolean
  readonly domain: string
  /** The binding's transport (`mcp`, ...); absent for the REST route. A bounded metrics label. */
  readonly transport?: string
  outcome: Outcome
  status: number
  code?: string
  dryRun: boolean
  escalated: boolean
  /** True once `execute` began: from then on a lost call may have taken effect. */
  executed: boolean
  /** Epoch milliseconds when the call entered the pipeline. */
  readonly startedAt: number
  queueMs: number
  executeMs: number
  durationMs: number
  touchedResources: readonly string[]
  mutatedResources: readonly string[]
  debugSteps: readonly DebugStep[]
  /** What went wrong, for the log only (never sent to a caller on a 5xx). */
  failure?: unknown
}
