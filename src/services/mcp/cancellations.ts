import type { CancelSignal } from '../../core/abort.js'
import type { JsonRpcId } from './json-rpc.js'

/** A signal `notifications/cancelled` can fire; one listener, like the pipeline's own signals. */
export class CancelledSignal implements CancelSignal {
  aborted = false
  constructor (readonly scope: string, readonly id: JsonRpcId) {}
  #listener: (() => void) | undefined
  addEventListener (_type: 'abort', listener: () => void): void { this.#listener = listener }
  removeEventListener (): void { this.#listener = undefined }
  fire (): void {
    if (this.aborted) return
    this.aborted = true
    this.#listener?.()
  }
}

/** The methods whose request runs a call through the pipeline: a client may cancel them. */
export const CANCELLABLE: ReadonlySet<string> = new Set(['tools/call', 'resources/read', 'prompts/get'])

/**
 * The requests that run a call (`CANCELLABLE`) in flight in this process, so that
 * `notifications/cancelled` (a separate POST in a stateless server) can abort one. A request id is the client's own
 * counter, so ids are kept per caller (`scope`); when two calls of one scope share an id the
 * notification is ambiguous and cancels nothing rather than the wrong call. On another
 * replica the notification finds nothing: closing the stream is the cancellation that always
 * works.
 */
export class Cancellations {
  // By scope, then by id (a Map tells 1 from "1"): the scope is usually the principal's id, a
  // string already hashed, and ids are small numbers, so no key is built for a call. One signal
  // per id, or a set of them where ids repeat: every client of a principal counts from 0 or 1, so
  // many calls in flight may share one (a set keeps each open and close O(1)).
  readonly #calls = new Map<string, Map<JsonRpcId, CancelledSignal | Set<CancelledSignal>>>()

  /** Register a call; `close` it when it settles. */
  open (scope: string, id: JsonRpcId): CancelledSignal {
    const signal = new CancelledSignal(scope, id)
    let calls = this.#calls.get(scope)
    if (calls === undefined) {
      calls = new Map()
      this.#calls.set(scope, calls)
    }
    const present = calls.get(id)
    if (present === undefined) calls.set(id, signal)
    else if (present instanceof Set) present.add(signal)
    else calls.set(id, new Set([present, signal]))
    return signal
  }

  close (signal: CancelledSignal): void {
    const calls = this.#calls.get(signal.scope)
    const present = calls?.get(signal.id)
    if (calls === undefined || present === undefined) return
    if (present instanceof Set) {
      present.delete(signal)
      if (present.size > 0) return
    } else if (present !== signal) {
      return
    }
    calls.delete(signal.id)
    // A scope with nothing in flight goes: scopes are callers' (and their sessions'), unbounded.
    if (calls.size === 0) this.#calls.delete(signal.scope)
  }

  /** Handle `notifications/cancelled`: true when exactly one call matched and was aborted. */
  cancel (scope: string, params: Record<string, unknown>): boolean {
    const id = params.requestId
    if (typeof id !== 'string' && typeof id !== 'number') return false
    const present = this.#calls.get(scope)?.get(id)
    if (present === undefined) return false
    // Two calls in flight under one id: the notification cannot say which, so it cancels neither.
    const only = present instanceof Set ? (present.size === 1 ? present.values().next().value! : undefined) : present
    if (only === undefined) return false
    only.fire()
    return true
  }

  /** Calls in flight, over every scope. */
  get size (): number {
    let size = 0
    for (const calls of this.#calls.values()) {
      for (const present of calls.values()) size += present instanceof Set ? present.size : 1
    }
    return size
  }

  /** Scopes with a call in flight: one that has none is not kept. */
  get scopes (): number {
    return this.#calls.size
  }
}
