import type { FastifyReply } from 'fastify'
import type { LimitReport } from '../../src/core/limits/report.js'

/*
 * The `RateLimit-Policy` and `RateLimit` header fields of the IETF HTTPAPI rate-limit draft,
 * one item per limit that covers the call: `"name";q=quota;w=window` and `"name";r=left;t=reset`.
 * A budget's items carry `qu="amount"` (the amounts the budget counts, in whole units: the
 * draft's numbers are integers; the exact figures are in `GET /limits`). A rate's window is
 * its duration; a fixed window's `w` is the seconds the current one lasts in all.
 */

/** Set the fields on `reply`; a dry run also says what it would spend (`Toolgate-Would-Spend`). */
export function limitHeaders (reply: FastifyReply, reports: readonly LimitReport[], dryRun = false): void {
  if (reports.length === 0) return
  const policy = reports.map(report => `"${report.name}";q=${Math.floor(report.max)};w=${report.windowSeconds}${report.kind === 'budget' ? ';qu="amount"' : ''}`)
  const state = reports.map(report => `"${report.name}";r=${Math.floor(report.remaining)};t=${report.resetSeconds}`)
  void reply.header('RateLimit-Policy', policy.join(', ')).header('RateLimit', state.join(', '))
  if (dryRun) void reply.header('Toolgate-Would-Spend', reports.map(report => `"${report.name}";s=${report.spends}`).join(', '))
}

/** Whether a problem's `limit` is a whole report (a refusal past a count), not only a name. */
export function isLimitReport (value: unknown): value is LimitReport {
  const report = value as Partial<LimitReport> | undefined
  return typeof report?.name === 'string' && typeof report.max === 'number' && typeof report.remaining === 'number' && typeof report.windowSeconds === 'number'
}
