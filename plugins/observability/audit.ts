import type { FastifyReply, FastifyRequest } from 'fastify'
import { ERRORS, GatewayError, type AnyTool, type ToolgateError } from '../../src/index.js'
import { type AuditTrail } from '../../src/services/audit/audit-trail.js'

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
