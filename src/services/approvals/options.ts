import type { Redis } from 'ioredis'
import type { ApprovalEvent, ApprovalOptions } from '../../core/approvals/approvals.js'
import { MemoryApprovalStore } from '../../core/approvals/memory-store.js'
import type { ToolLogger } from '../../core/app-context.js'
import type { Config } from '../config.js'
import { RedisApprovalStore } from '../redis/approval-store.js'

/**
 * The catalog's approval options from configuration: in Redis when the gateway has one (shared
 * by replicas), else in this process (lost on restart). Settled approvals are kept as long as
 * idempotency records, so a repeat of an approved call still replays its answer.
 */
export function approvalOptionsOf (config: Config, redis: Redis | undefined, onEvent: (event: ApprovalEvent) => void): ApprovalOptions {
  return {
    store: redis === undefined
      ? new MemoryApprovalStore({ retainMs: config.idempotencyTtlMs })
      : new RedisApprovalStore(redis, config.redisPrefix, config.idempotencyTtlMs),
    ttlMs: config.approvalTtlMs,
    limits: { maxPendingPerPrincipal: config.approvalMaxPendingPerPrincipal, maxPendingTotal: config.approvalMaxPending },
    maxWaitMs: config.approvalMaxWaitMs,
    allowSelfApproval: config.approvalAllowSelf,
    onEvent,
  }
}

/** One log line per step (requested, decided, expired, executed): ids, principals and the input digest, never the input. */
export function logApprovalEvent (log: ToolLogger, event: ApprovalEvent): void {
  const { record } = event
  const line = { approvalId: record.id, tool: record.tool, requestedBy: record.requestedBy, inputDigest: record.inputDigest, reasons: record.reasons }
  switch (event.type) {
    case 'requested':
      log.info({ ...line, effects: record.effectsLabel, expiresAt: new Date(record.expiresAt).toISOString() }, 'approval requested')
      break
    case 'decided':
      log.info({ ...line, decision: record.status, decidedBy: record.decidedBy, note: record.note }, 'approval decided')
      break
    case 'expired':
      log.info({ ...line, decision: 'expired' }, 'approval expired')
      break
    case 'executed':
      log.info({ ...line, approvedBy: record.decidedBy, executedBy: event.by, ok: event.ok }, 'approved call executed')
      break
  }
}
