import { randomUUID } from 'node:crypto'
import { ToolError } from 'toolgate'

/** A question waiting for a person. */
export interface PendingApproval {
  readonly ticket: string
  readonly question: string
  readonly requestedBy: string
  readonly requestedAt: string
}

export interface Decision {
  readonly approved: boolean
  readonly decidedBy: string
  readonly note: string | null
}

interface Waiter extends PendingApproval {
  readonly settle: (decision: Decision) => void
}

export const DEFAULT_MAX_PENDING = 32

/**
 * Where approval requests wait for a decision. In memory and bounded: at most `maxPending`
 * tickets wait at once. A ticket lives exactly as long as the call that asked: when that
 * call's signal aborts (cancel, disconnect, shutdown) the ticket is withdrawn.
 */
export class ApprovalDesk {
  readonly maxPending: number
  readonly #pending = new Map<string, Waiter>()

  constructor (maxPending = DEFAULT_MAX_PENDING) {
    this.maxPending = maxPending
  }

  /** Open a ticket and wait until someone decides it or `signal` aborts. */
  wait (question: string, requestedBy: string, signal: AbortSignal, onOpen?: (pending: PendingApproval) => void): Promise<Decision & { ticket: string }> {
    if (this.#pending.size >= this.maxPending) {
      throw new ToolError(429, 'TOO_MANY_PENDING_APPROVALS', `${this.maxPending} approvals are already waiting; retry once some are decided`)
    }
    signal.throwIfAborted()
    const ticket = randomUUID()
    return new Promise((resolve, reject) => {
      const onAbort = (): void => {
        this.#pending.delete(ticket)
        reject(signal.reason)
      }
      const settle = (decision: Decision): void => {
        signal.removeEventListener('abort', onAbort)
        this.#pending.delete(ticket)
        resolve({ ticket, ...decision })
      }
      const waiter: Waiter = { ticket, question, requestedBy, requestedAt: new Date().toISOString(), settle }
      this.#pending.set(ticket, waiter)
      signal.addEventListener('abort', onAbort, { once: true })
      onOpen?.(this.#view(waiter))
    })
  }

  /** Who asked, for the self-approval check; undefined when the ticket is not waiting. */
  get (ticket: string): PendingApproval | undefined {
    const waiter = this.#pending.get(ticket)
    return waiter === undefined ? undefined : this.#view(waiter)
  }

  list (): PendingApproval[] {
    return [...this.#pending.values()].map(waiter => this.#view(waiter))
  }

  /** Decide a waiting ticket; its asker's call returns the decision. */
  decide (ticket: string, decision: Decision): PendingApproval {
    const waiter = this.#pending.get(ticket)
    if (waiter === undefined) throw new ToolError(404, 'TICKET_NOT_FOUND', `no approval "${ticket}" is waiting (it was decided, withdrawn, or never existed)`)
    waiter.settle(decision)
    return this.#view(waiter)
  }

  #view ({ ticket, question, requestedBy, requestedAt }: Waiter): PendingApproval {
    return { ticket, question, requestedBy, requestedAt }
  }
}
