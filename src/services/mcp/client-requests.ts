import type { Elicit, ElicitationAnswer } from '../../core/elicitation.js'

/**
 * Requests this server sends its client (a session's own channel: stdio), and the client's
 * replies matched to them by id. Ids are the server's own (`tg-…`), apart from the client's.
 */
export class ClientRequests {
  readonly #write: (text: string) => void
  readonly #pending = new Map<string, (reply: Record<string, unknown>) => void>()
  #next = 0

  constructor (write: (text: string) => void) {
    this.#write = write
  }

  /** The client's reply (its `result` or `error`), or undefined when `signal` aborts first (the request is then forgotten). */
  async request (method: string, params: Record<string, unknown>, signal: AbortSignal): Promise<Record<string, unknown> | undefined> {
    if (signal.aborted) return undefined
    const id = `tg-${++this.#next}`
    return await new Promise(resolve => {
      const aborted = (): void => {
        this.#pending.delete(id)
        resolve(undefined)
      }
      signal.addEventListener('abort', aborted, { once: true })
      this.#pending.set(id, reply => {
        signal.removeEventListener('abort', aborted)
        resolve(reply)
      })
      this.#write(JSON.stringify({ jsonrpc: '2.0', id, method, params }))
    })
  }

  /** A reply from the client; false when it answers none of ours (a late or unknown one: dropped). */
  reply (message: Record<string, unknown>): boolean {
    const id = message.id
    const settle = typeof id === 'string' ? this.#pending.get(id) : undefined
    if (settle === undefined) return false
    this.#pending.delete(id as string)
    settle(message)
    return true
  }
}

/** Whether a client's `initialize` capabilities take form elicitation (`elicitation: {}` says form, as in 2025-06-18). */
export function takesFormElicitation (capabilities: unknown): boolean {
  if (typeof capabilities !== 'object' || capabilities === null) return false
  const elicitation = (capabilities as Record<string, unknown>).elicitation
  if (typeof elicitation !== 'object' || elicitation === null) return false
  const modes = Object.keys(elicitation)
  return modes.length === 0 || modes.includes('form')
}

/** Whether a client declared it can open a URL for its user (`elicitation.url`). */
export function takesUrlElicitation (capabilities: unknown): boolean {
  if (typeof capabilities !== 'object' || capabilities === null) return false
  const elicitation = (capabilities as Record<string, unknown>).elicitation
  return typeof elicitation === 'object' && elicitation !== null && Object.hasOwn(elicitation, 'url')
}

/** Elicitation over `requests`: a client's error reply is a decline (it cannot answer), no reply before the call ends a cancel. */
export function elicitOver (requests: ClientRequests): Elicit {
  return async (request, signal) => {
    // No `mode`: form is the default, and a 2025-06-18 client knows no other.
    const reply = await requests.request('elicitation/create', { message: request.message, requestedSchema: request.requestedSchema }, signal)
    if (reply === undefined) return { action: 'cancel' }
    if (reply.error !== undefined) return { action: 'decline' }
    return reply.result as ElicitationAnswer
  }
}
