import type { CallRecord } from '../../core/call-record.js'
import { callFields, type CallFacts } from './call-line.js'
import { sha256 } from './chain.js'
import { AuditWriter, type AuditWriterOptions } from './writer.js'

export type { CallFacts } from './call-line.js'

/** One approval decision, for `approvalDecided`. */
export interface ApprovalDecision {
  readonly approvalId: string
  readonly decision: 'approved' | 'rejected' | 'expired'
  readonly tool: string
  readonly effects: readonly string[]
  /** The pending approval's own input digest, as it showed it to the decider. */
  readonly inputDigest: string
  readonly requestedBy: string
  /** Absent for an expiry. */
  readonly decidedBy?: string
  readonly note?: string
  readonly requestId?: string
  readonly traceId?: string
}

export interface AuditTrailOptions extends AuditWriterOptions {
  /** Write each input itself, not only its digest (it may hold personal data: off by default). */
  readonly includeInput: boolean
}

/** The kinds of the unlisted tools that read an upstream server's resources and prompts. */
const AUDITED_READS = new Set(['resource', 'prompt'])

/**
 * The audit trail: one chained JSON line per call of a tool that is not read-only (refused
 * ones too: a denied attempt to change something is what an auditor looks for), and one per
 * approval decision. Read-only tools change nothing and are left to logs and traces.
 */
export class AuditTrail {
  readonly #writer: AuditWriter
  readonly #includeInput: boolean

  private constructor (writer: AuditWriter, includeInput: boolean) {
    this.#writer = writer
    this.#includeInput = includeInput
  }

  static async open (path: string, options: AuditTrailOptions): Promise<AuditTrail> {
    return new AuditTrail(await AuditWriter.open(path, options), options.includeInput)
  }

  /**
   * Whether a call of this record goes into the trail: every call that may change something,
   * and the reads of an upstream MCP server's resources and prompts, which hand a caller what
   * another system holds (the gateway's own read-only tools are not audited).
   */
  static covers (record: CallRecord): boolean {
    return !record.readOnly || AUDITED_READS.has(record.kind)
  }

  /**
   * One finished (or refused) call; a read-only tool's call is not audited. Its `inputDigest` is
   * `sha256:` and the hex SHA-256 of the input's JSON as received (keys in the order sent): the
   * same input sent again gives the same digest, so a line can be matched to a request body.
   */
  call (record: CallRecord, facts: CallFacts): void {
    if (!AuditTrail.covers(record)) return
    const inputJson = JSON.stringify(facts.input ?? null)
    const written = this.#includeInput && facts.input !== undefined ? inputJson : undefined
    this.#writer.appendFields(callFields(record, facts, `sha256:${sha256(inputJson)}`, written), facts.principal)
  }

  /** One refusal before the pipeline saw the call (unauthenticated, rate limited, bad transport). */
  refusedEarly (tool: { readonly id: string, readonly kind: string, readonly effects: readonly string[] }, refusal: { readonly outcome: string, readonly status: number, readonly code: string }, facts: Omit<CallFacts, 'input' | 'approvalId'>): void {
    this.#writer.append({
      event: 'call', time: new Date().toISOString(), principal: facts.principal, source: facts.source, tool: tool.id, kind: tool.kind,
      effects: tool.effects, ...refusal, executed: false, requestId: facts.requestId, traceId: facts.traceId,
    }, facts.principal)
  }

  /** For the approvals service: call it with every decision (approve, reject, expiry). */
  approvalDecided (decision: ApprovalDecision): void {
    // An expiry is the gateway's own line; a decision is its decider's.
    this.#writer.append({ event: 'approval', time: new Date().toISOString(), ...decision }, decision.decidedBy)
  }

  /** The chain's head: its last `seq` and `hash`. */
  get head (): { readonly seq: number, readonly hash: string } {
    return this.#writer.head
  }

  async flush (): Promise<void> {
    await this.#writer.flush()
  }

  async close (): Promise<void> {
    await this.#writer.close()
  }
}
