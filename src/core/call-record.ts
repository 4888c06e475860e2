import type { Outcome } from './outcome.js'
import type { DebugStep, Effect, TraceContext } from './tool.js'

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
  /** The operator's bundle the call came through (absent: none). A bounded metrics label: bundles are the operator's. */
  readonly bundle?: string
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
  /** The limit that refused the call, or the first of those that asked a person. */
  limit?: string
  limitAction?: 'refused' | 'asked'
  /** What went wrong, for the log only (never sent to a caller on a 5xx). */
  failure?: unknown
  /** The W3C trace context the call ran under (the binding's, when the host traces it): its log line and exemplar name it. */
  readonly trace?: TraceContext
}
