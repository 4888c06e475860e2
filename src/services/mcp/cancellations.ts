import type { CancelSignal } from '../../core/abort.js'
import type { JsonRpcId } from './json-rpc.js'

/** A signal `notifications/cancelled` can fire; one listener, like the pipeline's own signals. */
class CancelledSignal implements CancelSignal {
  aborted = false
  #listener: (() => void) | undefined
  addEventListener (_type: 'abort', listener: () => void): void { this.#listener = listener }
  removeEventListener (): void { this.#listener = undefined }
  fire (): void {
    if (this.aborted) return
    this.aborted = true
    this.#listener?.()
  }
}

/**
 * The `tools/call` requests in flight in this process, so that `notifications/cancelled` (a
 * separate POST in a stateless server) can abort one. A request id is the client's own
 * counter, so ids are kept per caller (`scope`); when two calls of one scope share an id the
 * notification is ambiguous and cancels nothing rather than the wrong call. On another
 * replica the notification finds nothing: closing the stream is the cancellation that always
 * works.
 */
export class Cancellations {
  readonly #calls = new Map<string, CancelledSignal[]>()

  /** Register a call; `done` must be called when it settles. */
  open (scope: string, id: JsonRpcId): { signal: CancelSignal, done: () => void } {
    const key = keyOf(scope, id)
    const signal = new CancelledSignal()
    const list = this.#calls.get(key)
    if (list === undefined) this.#calls.set(key, [signal])
    else list.push(signal)
    return {
      signal,
      done: () => {
        const current = this.#calls.get(key)
        if (current === undefined) return
        const rest = current.filter(s => s !== signal)
        if (rest.length === 0) this.#calls.delete(key)
        else this.#calls.set(key, rest)
      },
    }
  }

  /** Handle `notifications/cancelled`: true when exactly one call matched and was aborted. */
  cancel (scope: string, params: Record<string, unknown>): boolean {
    const id = params.requestId
    if (typeof id !== 'string' && typeof id !== 'number') return false
    const list = this.#calls.get(keyOf(scope, id))
    if (list?.length !== 1) return false
    list[0]!.fire()
    return true
  }

  get size (): number {
    return this.#calls.size
  }
}

function keyOf (scope: string, id: JsonRpcId): string {
  return `${scope}\u0000${typeof id}:${id}`
}
