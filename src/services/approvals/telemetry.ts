import type { GatewayApp, ToolLogger } from '../../core/app-context.js'
import type { ApprovalEvent } from '../../core/approvals/approvals.js'
import type { ApprovalRecord } from '../../core/approvals/store.js'
import type { ToolCatalog } from '../../core/catalog.js'
import type { AuditTrail } from '../audit/audit-trail.js'
import type { ApprovalMetrics } from '../metrics/approval-metrics.js'
import { logApprovalEvent } from './options.js'
import { decisionOf, type RecentDecisions } from './recent-decisions.js'

/**
 * The approval events' sinks: a log line each, and (with metrics on) the counters and the
 * pending gauge, which is re-counted from the store after each change and each sweep.
 */
export function approvalTelemetry (log: ToolLogger, metrics: ApprovalMetrics | undefined, catalog: () => ToolCatalog<GatewayApp>, audit?: () => AuditTrail | undefined, more: ApprovalSinks = {}): { onEvent: (event: ApprovalEvent) => void, onPending: (count: number) => void } {
  const onPending = (count: number): void => { if (metrics !== undefined) metrics.pending = count }
  return {
    onEvent: event => {
      logApprovalEvent(log, event)
      if (event.type === 'decided' || event.type === 'expired') auditDecision(audit?.(), event.record)
      const decision = decisionOf(event)
      if (decision !== undefined) more.recent?.add(decision).catch((error: unknown) => { log.warn({ err: error, approvalId: decision.id }, 'a decision could not be added to the recent decisions') })
      more.webhook?.(event)
      if (metrics === undefined) return
      metrics.observe(event)
      if (event.type !== 'executed') catalog().approvals.store.pendingCount().then(onPending, () => {})
    },
    onPending,
  }
}

/** Further sinks: the page's recent decisions, the webhooks. */
export interface ApprovalSinks {
  readonly recent?: RecentDecisions
  readonly webhook?: (event: ApprovalEvent) => void
}

/** Every decision (and every expiry: a decision by the clock) is a line of the audit trail. */
function auditDecision (audit: AuditTrail | undefined, record: ApprovalRecord): void {
  if (audit === undefined || (record.status !== 'approved' && record.status !== 'rejected' && record.status !== 'expired')) return
  audit.approvalDecided({
    approvalId: record.id,
    decision: record.status,
    tool: record.tool,
    effects: record.effects,
    inputDigest: record.inputDigest,
    requestedBy: record.requestedBy,
    ...(record.decidedBy === undefined ? {} : { decidedBy: record.decidedBy }),
    ...(record.note === undefined ? {} : { note: record.note }),
  })
}
