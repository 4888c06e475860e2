import type { CancelSignal } from '../../core/abort.js'
import type { JsonRpcId } from './json-rpc.js'

/** A signal `notifications/cancelled` can fire; one listener, like the pipeline's own signals. */
export class CancelledSignal implements CancelSignal {
  aborted = false
  constructor (readonly key: string) {}
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
  // One signal per key almost always: an array only when a client reuses an id concurrently.
  readonly #calls = new Map<string, CancelledSignal | CancelledSignal[]>()

  /** Register a call; `close` it when it settles. */
  open (scope: string, id: JsonRpcId): CancelledSignal {
    const signal = new CancelledSignal(keyOf(scope, id))
    const present = this.#calls.get(signal.key)
    this.#calls.set(signal.key, present === undefined ? signal : [...[present].flat(), signal])
    return signal
  }

  close (signal: CancelledSignal): void {
    const present = this.#calls.get(signal.key)
    if (present === signal) {
      this.#calls.delete(signal.key)
    } else if (Array.isArray(present)) {
      const rest = present.filter(s => s !== signal)
      this.#calls.set(signal.key, rest.length === 1 ? rest[0]! : rest)
    }
  }

  /** Handle `notifications/cancelled`: true when exactly one call matched and was aborted. */
  cancel (scope: string, params: Record<string, unknown>): boolean {
    const id = params.requestId
    if (typeof id !== 'string' && typeof id !== 'number') return false
    const present = this.#calls.get(keyOf(scope, id))
    if (present === undefined || Array.isArray(present)) return false
    present.fire()
    return true
  }

  get size (): number {
    return this.#calls.size
  }
}

function keyOf (scope: string, id: JsonRpcId): string {
  return `${scope}\u0000${typeof id}:${id}`
}
