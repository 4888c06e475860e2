import { randomUUID } from 'node:crypto'
import type { CannonRequest } from './autocannon.js'

/**
 * The soak's request mix: every shipped tool, with exactly the answers each call may get.
 * Each connection runs the steps in order, one at a time, and a pass over them is one
 * "agent session": its own X-Session-Id and note key. So within a pass the outcome of each
 * step is known: the note it wrote is there until it deletes it. The only shared state is the
 * ledger: money goes round alice -> carol -> bob -> alice, so transfers keep succeeding all
 * along, but one that finds an account drained by the other connections fails with 409.
 */

type Context = Record<string, unknown>

interface Step {
  readonly name: string
  readonly tool: string
  readonly query?: string
  readonly body: (context: Context) => unknown
  /** "200", or "status CODE" for a problem: every answer this step may get. */
  readonly expect: readonly string[]
  readonly idempotencyKey?: (context: Context) => string
  /** A finer check of an answer; returns what is wrong, if anything. */
  readonly check?: (outcome: string, headers: Record<string, string | string[]>, context: Context) => string | undefined
}

const noteKey = (context: Context): string => (context.noteKey ??= `soak-${randomUUID().slice(0, 12)}`) as string
const transfer = { from: 'alice', to: 'carol', amount: 2 }
const drained = ['200', '409 INSUFFICIENT_FUNDS']

const STEPS: readonly Step[] = [
  { name: 'time_now', tool: 'time_now', body: () => ({ timeZone: 'Europe/Paris' }), expect: ['200'] },
  { name: 'text_stats', tool: 'text_stats', body: () => ({ text: 'the soak goes on and on', top: 2 }), expect: ['200'] },
  { name: 'text_stats bad input', tool: 'text_stats', body: () => ({ text: 1 }), expect: ['400 TOOLGATE_INVALID_INPUT'] },
  { name: 'gateway_status', tool: 'gateway_status', body: () => ({}), expect: ['200'] },
  { name: 'notes_write', tool: 'notes_write', body: c => ({ key: noteKey(c), text: 'soak test note', overwrite: true }), expect: ['200'] },
  { name: 'notes_read', tool: 'notes_read', body: c => ({ key: noteKey(c) }), expect: ['200'] },
  { name: 'notes_list', tool: 'notes_list', body: () => ({ prefix: 'soak-' }), expect: ['200'] },
  { name: 'notes_delete', tool: 'notes_delete', body: c => ({ key: noteKey(c) }), expect: ['200'] },
  { name: 'notes_read after delete', tool: 'notes_read', body: c => ({ key: noteKey(c) }), expect: ['404 NOTE_NOT_FOUND'] },
  { name: 'ledger_balance', tool: 'ledger_balance', body: () => ({}), expect: ['200'] },
  {
    name: 'ledger_transfer', tool: 'ledger_transfer', body: () => transfer, expect: drained,
    idempotencyKey: c => (c.transferKey = randomUUID()) as string,
    check: (outcome, _headers, c) => { c.transferOutcome = outcome; return undefined },
  },
  {
    name: 'ledger_transfer replayed', tool: 'ledger_transfer', body: () => transfer, expect: drained,
    idempotencyKey: c => c.transferKey as string,
    check: (outcome, headers, c) => headers['idempotent-replayed'] !== 'true'
      ? 'no Idempotent-Replayed: true on a repeat'
      : outcome !== c.transferOutcome ? `replayed ${outcome}, the original was ${String(c.transferOutcome)}` : undefined,
  },
  { name: 'ledger_transfer carol to bob', tool: 'ledger_transfer', body: () => ({ from: 'carol', to: 'bob', amount: 2 }), expect: drained, idempotencyKey: () => randomUUID() },
  { name: 'ledger_transfer bob to alice', tool: 'ledger_transfer', body: () => ({ from: 'bob', to: 'alice', amount: 2 }), expect: drained, idempotencyKey: () => randomUUID() },
  { name: 'url_fetch (no allowlist)', tool: 'url_fetch', body: () => ({ url: 'https://example.com/' }), expect: ['403 HOST_NOT_ALLOWED'] },
]

/** What the soak saw, per step: counts of each outcome, and what should not have happened. */
export class Tally {
  readonly outcomes = new Map<string, Map<string, number>>()
  readonly violations = new Map<string, { count: number, example: string }>()

  count (step: string, outcome: string): void {
    const counts = this.outcomes.get(step) ?? new Map<string, number>()
    counts.set(outcome, (counts.get(outcome) ?? 0) + 1)
    this.outcomes.set(step, counts)
  }

  violation (step: string, what: string, example: string): void {
    const key = `${step}: ${what}`
    const seen = this.violations.get(key)
    this.violations.set(key, { count: (seen?.count ?? 0) + 1, example: seen?.example ?? example.slice(0, 300) })
  }
}

/** "200" for a success, "404 NOTE_NOT_FOUND" for a problem (its `code`). */
function outcomeOf (status: number, body: string): string {
  if (status >= 200 && status < 300) return String(status)
  try {
    return `${status} ${(JSON.parse(body) as { code?: string }).code ?? '(no code)'}`
  } catch {
    return `${status} (not JSON)`
  }
}

/** The mix as autocannon requests, counting every answer into `tally`. */
export function soakRequests (apiKey: string, tally: Tally): CannonRequest[] {
  return STEPS.map(step => ({
    method: 'POST',
    path: `/tools/${step.tool}${step.query ?? ''}`,
    setupRequest: (request, context) => {
      context.session ??= `soak-${randomUUID().slice(0, 12)}`
      const headers: Record<string, string> = { 'content-type': 'application/json', 'x-api-key': apiKey, 'x-session-id': context.session as string }
      if (step.idempotencyKey !== undefined) headers['idempotency-key'] = step.idempotencyKey(context)
      return { ...request, headers, body: JSON.stringify(step.body(context)) }
    },
    onResponse: (status, body, context, headers) => {
      const outcome = outcomeOf(status, body)
      tally.count(step.name, outcome)
      if (!step.expect.includes(outcome)) tally.violation(step.name, `unexpected ${outcome}`, body)
      const wrong = step.check?.(outcome, headers, context)
      if (wrong !== undefined) tally.violation(step.name, wrong, body)
    },
  }))
}
