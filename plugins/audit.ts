import type { FastifyBaseLogger, FastifyReply, FastifyRequest } from 'fastify'
import { ERRORS, GatewayError, type AnyTool, type ToolgateError } from '../src/index.js'
import { AuditTrail } from '../src/services/audit/audit-trail.js'
import { ConfigError, type Config } from '../src/services/config.js'
import type { GatewayMetrics } from '../src/services/metrics/gateway-metrics.js'

/**
 * Open the audit trail `AUDIT_LOG` names, or none. A full buffer or a failed write is counted
 * (`toolgate_audit_dropped_total`) and logged: one warning when drops begin and one with the
 * count when they end (a slow disk must not flood the logs too); the file itself gets a
 * `dropped` record with the count as soon as there is room.
 */
export async function openAuditTrail (config: Config, metrics: GatewayMetrics, log: FastifyBaseLogger): Promise<AuditTrail | undefined> {
  if (config.auditLog === undefined) return undefined
  const path = config.auditLog
  return await AuditTrail.open(path, {
    includeInput: config.auditLogInputs,
    maxBuffered: config.auditBufferLines,
    flushMs: config.auditFlushMs,
    fsync: config.auditFsync,
    onDrop: (lines, first) => {
      metrics.auditDropped(lines)
      if (first) log.warn({ bufferLines: config.auditBufferLines }, 'audit buffer full: dropping audit lines until the log catches up')
    },
    onDropsRecorded: count => { log.warn({ dropped: count }, 'audit lines dropped; the audit log records how many') },
    onError: error => { log.error({ err: error, auditLog: config.auditLog }, 'audit write failed') },
  }).catch((error: unknown) => {
    // A file that cannot be opened (or whose chain cannot be read) is a setting to fix: stop, naming it.
    throw new ConfigError(`invalid setting "AUDIT_LOG": ${path}: ${(error as Error).message}`)
  })
}

/**
 * A call of a non-read-only tool refused before the pipeline saw it (no credentials, rate
 * limited, unreadable body): audited as a refused call, with what the request knows.
 */
export function auditEarlyRefusal (audit: AuditTrail, toolOf: (id: string) => AnyTool | undefined): (toolId: string, error: ToolgateError, request: FastifyRequest, reply: FastifyReply) => void {
  return (toolId, error, request) => {
    const tool = toolOf(toolId)
    if (tool === undefined || tool.isReadOnly) return
    const outcome = error instanceof GatewayError ? ERRORS[error.code].outcome : 'tool_error'
    audit.refusedEarly(tool, { outcome, status: error.status, code: error.code }, {
      principal: request.principal?.id ?? 'unauthenticated',
      source: request.ip,
      requestId: request.id,
    })
  }
}
