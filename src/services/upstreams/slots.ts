import { UpstreamError } from '../../core/errors.js'

/**
 * Calls in flight to one upstream, at most `limit` at once; the rest wait in order, at most
 * `maxQueue` of them. One slow server holds only its own slots, never every call of the gateway.
 */
export class Slots {
  readonly #limit: number
  readonly #maxQueue: number
  #inFlight = 0
  readonly #queue: Array<() => void> = []

  constructor (limit: number, maxQueue: number) {
    this.#limit = limit
    this.#maxQueue = maxQueue
  }

  get inFlight (): number { return this.#inFlight }

  /** A slot, as the function that gives it back; rejects when the queue is full or the call's signal aborts (read only when it must wait). */
  async acquire (call: { readonly signal: AbortSignal }, server: string): Promise<() => void> {
    if (this.#inFlight < this.#limit && this.#queue.length === 0) {
      this.#inFlight++
      return this.#releaser()
    }
    if (this.#queue.length >= this.#maxQueue) {
      throw new UpstreamError('TOOLGATE_QUEUE_FULL', `upstream "${server}" has ${this.#limit} calls in flight and ${this.#queue.length} waiting`, { retryAfter: 1 })
    }
    const { signal } = call
    signal.throwIfAborted()
    return await new Promise<() => void>((resolve, reject) => {
      const grant = (): void => {
        signal.removeEventListener('abort', aborted)
        this.#inFlight++
        resolve(this.#releaser())
      }
      const aborted = (): void => {
        const at = this.#queue.indexOf(grant)
        if (at !== -1) this.#queue.splice(at, 1)
        reject(signal.reason as unknown)
      }
      this.#queue.push(grant)
      signal.addEventListener('abort', aborted, { once: true })
    })
  }

  #releaser (): () => void {
    let released = false
    return () => {
      if (released) return
      released = true
      this.#inFlight--
      this.#queue.shift()?.()
    }
  }
}
