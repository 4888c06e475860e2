import type { ApprovalEvent } from '../../../core/approvals/approvals.js'

/** The events a receiver hears of; `executed` stays in the logs and the audit trail. */
type WebhookEventType = 'approval.requested' | 'approval.decided' | 'approval.expired'

export interface WebhookMessage {
  /** Stable per event (the same on every attempt and every replica): receivers dedupe on it. */
  readonly id: string
  readonly type: WebhookEventType
  readonly body: string
}

export interface ApprovalEventShape {
  /** The page, for the link in each event: `https://gw.example.com/approvals/ui`. */
  readonly pageUrl: string
  /** Put the input itself in the event, not only its digest. */
  readonly includeInput: boolean
}

/**
 * The Standard Webhooks message of an approval event, or undefined for one no receiver hears
 * of. The body is `{ type, timestamp, data }`; `data` names the approval, the tool and its
 * declared effects, who asked and (once decided) who decided, the input's digest, and the page.
 */
export function webhookMessageOf (event: ApprovalEvent, shape: ApprovalEventShape, nowMs: number): WebhookMessage | undefined {
  if (event.type === 'executed') return undefined
  const { record } = event
  const type: WebhookEventType = `approval.${event.type}`
  const data = {
    id: record.id,
    status: event.type === 'expired' ? 'expired' : record.status,
    tool: record.tool,
    kind: record.kind,
    effects: [...record.effects],
    escalate: record.escalate,
    requestedBy: record.requestedBy,
    requestedAt: new Date(record.requestedAt).toISOString(),
    expiresAt: new Date(record.expiresAt).toISOString(),
    approvers: [...record.approvers],
    inputDigest: record.inputDigest,
    ...(shape.includeInput ? { input: record.input } : {}),
    ...(record.decidedBy === undefined ? {} : { decidedBy: record.decidedBy, decidedAt: new Date(record.decidedAt ?? nowMs).toISOString() }),
    ...(record.note === undefined ? {} : { note: record.note }),
    url: `${shape.pageUrl}#${record.id}`,
  }
  return {
    id: `msg_${record.id}_${event.type}`,
    type,
    body: JSON.stringify({ type, timestamp: new Date(nowMs).toISOString(), data }),
  }
}
