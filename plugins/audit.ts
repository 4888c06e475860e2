import type { FastifyBaseLogger, FastifyReply, FastifyRequest } from 'fastify'
import { ERRORS, GatewayError, type AnyTool, type ToolgateError } from '../src/index.js'
import { AuditTrail } from '../src/services/audit/audit-trail.js'
import type { Config } from '../src/services/config.js'
import type { GatewayMetrics } from '../src/services/metrics/gateway-metrics.js'

/**
 * Open the audit trail `AUDIT_LOG` names, or none. A full buffer or a failed write is counted
 * (`toolgate_audit_dropped_total`) and logged, at most one warning a second so a slow disk
 * does not also flood the logs; the file itself gets a `dropped` record once there is room.
 */
export async function openAuditTrail (config: Config, metrics: GatewayMetrics, log: FastifyBaseLogger): Promise<AuditTrail | undefined> {
  if (config.auditLog === undefined) return undefined
  let unreported = 0
  let lastWarning = 0
  return await AuditTrail.open(config.auditLog, {
    includeInput: config.auditLogInputs,
    maxBuffered: config.auditBufferLines,
    onDrop: lines => {
      metrics.auditDropped(lines)
      unreported += lines
      const now = Date.now()
      if (now - lastWarning < 1_000) return
      log.warn({ dropped: unreported, bufferLines: config.auditBufferLines }, 'audit lines dropped: the audit log cannot keep up (the log records how many)')
      lastWarning = now
      unreported = 0
    },
    onError: error => { log.error({ err: error, auditLog: config.auditLog }, 'audit write failed') },
  })
}

/**
 * A call of a non-read-only tool refused before the pipeline saw it (no credentials, rate
 * limited, unreadable body): audited as a refused call, with what the request knows.
 */
export function auditEarlyRefusal (audit: AuditTrail, tools: readonly AnyTool[]): (toolId: string, error: ToolgateError, request: FastifyRequest, reply: FastifyReply) => void {
  const byId = new Map(tools.map(tool => [tool.id, tool]))
  return (toolId, error, request) => {
    const tool = byId.get(toolId)
    if (tool === undefined || tool.isReadOnly) return
    const outcome = error instanceof GatewayError ? ERRORS[error.code].outcome : 'tool_error'
    audit.refusedEarly(tool, { outcome, status: error.status, code: error.code }, {
      principal: request.principal?.id ?? 'unauthenticated',
      requestId: request.id,
    })
  }
}
