import type { ApprovalReason, ApprovalRecord, ApprovalStatus } from './store.js'
import type { Effect } from '../tool.js'

/** An approval as callers and approvers see it (the 202 body, `GET /approvals/{id}`). */
export interface ApprovalView {
  readonly id: string
  readonly status: ApprovalStatus
  readonly tool: string
  readonly kind: string
  readonly effects: Effect[]
  readonly inputDigest: string
  readonly input: unknown
  readonly escalate: boolean
  readonly reasons: ApprovalReason[]
  readonly limits?: string[]
  readonly requestedBy: string
  readonly requestedAt: string
  readonly expiresAt: string
  readonly approvers?: string[]
  readonly decidedBy?: string
  readonly decidedAt?: string
  readonly note?: string
  readonly consumedAt?: string
}

export function viewOf (record: ApprovalRecord): ApprovalView {
  return {
    id: record.id,
    status: record.status,
    tool: record.tool,
    kind: record.kind,
    effects: [...record.effects],
    inputDigest: record.inputDigest,
    input: record.input,
    escalate: record.escalate,
    reasons: [...record.reasons],
    ...(record.limits === undefined ? {} : { limits: [...record.limits] }),
    requestedBy: record.requestedBy,
    requestedAt: iso(record.requestedAt),
    expiresAt: iso(record.expiresAt),
    ...(record.approvers.length === 0 ? {} : { approvers: [...record.approvers] }),
    ...(record.decidedBy === undefined ? {} : { decidedBy: record.decidedBy, decidedAt: iso(record.decidedAt ?? 0) }),
    ...(record.note === undefined ? {} : { note: record.note }),
    ...(record.consumedAt === undefined ? {} : { consumedAt: iso(record.consumedAt) }),
  }
}

function iso (ms: number): string {
  return new Date(ms).toISOString()
}
