import { AsyncLocalStorage } from 'node:async_hooks'
import type { ElicitRequest, ElicitResult } from '@modelcontextprotocol/client'
import type { ElicitationAnswer, ElicitationRequest } from '../../../core/elicitation.js'

/** A call's `ctx.elicit`: asks its caller, bounded by the call. */
export type Ask = (request: ElicitationRequest) => Promise<ElicitationAnswer>

/*
 * An upstream server's questions (`elicitation/create`) during a call, handed to the caller of
 * that call. A 2026-07-28 server asks inside the call's own answer (`input_required`, which the
 * SDK client fulfils and retries in the call's async context); a 2025 server sends a request of
 * its own, which names no call: it goes to the one call in flight that can ask, and is declined
 * when there are several (whose question it is cannot be told). A question nobody can answer
 * is declined at once: the server never waits on the gateway.
 */

const DECLINE: ElicitResult = Object.freeze({ action: 'decline' })

export class ElicitationRelay {
  readonly #asking = new AsyncLocalStorage<Ask>()
  readonly #inFlight = new Set<Ask>()

  /** Runs one call, its questions going to `elicit` (absent: the caller cannot be asked). */
  async run<T> (elicit: Ask | undefined, send: () => Promise<T>): Promise<T> {
    if (elicit === undefined) return await send()
    this.#inFlight.add(elicit)
    try {
      return await this.#asking.run(elicit, send)
    } finally {
      this.#inFlight.delete(elicit)
    }
  }

  /** The client's `elicitation/create` handler. */
  readonly handle = async (request: ElicitRequest): Promise<ElicitResult> => {
    const params = request.params as { mode?: unknown, message?: unknown, requestedSchema?: unknown }
    // URL mode sends a person to a page the gateway cannot vouch for: declined.
    if ((params.mode !== undefined && params.mode !== 'form') || typeof params.message !== 'string' || typeof params.requestedSchema !== 'object' || params.requestedSchema === null) return DECLINE
    const elicit = this.#asking.getStore() ?? (this.#inFlight.size === 1 ? this.#inFlight.values().next().value : undefined)
    if (elicit === undefined) return DECLINE
    const answer = await elicit({ message: params.message, requestedSchema: params.requestedSchema as Record<string, unknown> })
    return answer as ElicitResult
  }
}
