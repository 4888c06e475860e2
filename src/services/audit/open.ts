import type { ToolLogger } from '../../core/app-context.js'
import { ConfigError, type Config } from '../config.js'
import { AuditTrail } from './audit-trail.js'

/**
 * Open the audit trail `AUDIT_LOG` names, or none. A full buffer or a failed write is counted
 * (`onDropped`: `toolgate_audit_dropped_total` where the gateway has metrics) and logged: one warning when drops begin and one with the
 * count when they end (a slow disk must not flood the logs too); the file itself gets a
 * `dropped` record with the count as soon as there is room.
 */
export async function openAuditTrail (config: Config, log: ToolLogger, onDropped?: (lines: number) => void): Promise<AuditTrail | undefined> {
  if (config.auditLog === undefined) return undefined
  const path = config.auditLog
  return await AuditTrail.open(path, {
    includeInput: config.auditLogInputs,
    maxBuffered: config.auditBufferLines,
    flushMs: config.auditFlushMs,
    fsync: config.auditFsync,
    onDrop: (lines, first) => {
      onDropped?.(lines)
      if (first) log.warn({ bufferLines: config.auditBufferLines }, 'audit buffer full: dropping audit lines until the log catches up')
    },
    onDropsRecorded: count => { log.warn({ dropped: count }, 'audit lines dropped; the audit log records how many') },
    onError: error => { log.error({ err: error, auditLog: config.auditLog }, 'audit write failed') },
  }).catch((error: unknown) => {
    // A file that cannot be opened (or whose chain cannot be read) is a setting to fix: stop, naming it.
    throw new ConfigError(`invalid setting "AUDIT_LOG": ${path}: ${(error as Error).message}`)
  })
}

