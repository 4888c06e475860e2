/**
 * Why a call was aborted. The pipeline tells timeout, cancellation and shutdown apart by the
 * reason it recorded itself, never by guessing from the tool's error.
 */
export class AbortReason extends Error {
  constructor (readonly kind: 'timeout' | 'cancelled' | 'shutdown', message: string) {
    super(message)
    this.name = kind === 'timeout' ? 'TimeoutError' : 'AbortError'
  }
}

/** What the pipeline needs of a caller's cancellation signal; an `AbortSignal` is one. */
export interface CancelSignal {
  readonly aborted: boolean
  addEventListener (type: 'abort', listener: () => void, options?: { once?: boolean }): void
  removeEventListener (type: 'abort', listener: () => void): void
}

/**
 * The abort state of one call. Aborting runs one plain callback (the step that is waiting:
 * the queue or `execute`) rather than dispatching an event, and the `AbortSignal` a tool sees
 * is made only if the tool reads `ctx.signal`: in Node 20 a signal costs microseconds, and
 * most tools never look at it.
 */
export class CallControl {
  reason: AbortReason | undefined
  /** Links of the catalog's list of calls in flight (see `InFlightCalls`). */
  previous: CallControl | undefined
  next: CallControl | undefined
  #controller: AbortController | undefined
  #onAbort: ((reason: AbortReason) => void) | undefined
  #cancel: (() => void) | undefined
  #followed: CancelSignal[] | undefined
  #listeners: Array<(reason: AbortReason) => void> | undefined

  get signal (): AbortSignal {
    if (this.#controller === undefined) {
      this.#controller = new AbortController()
      if (this.reason !== undefined) this.#controller.abort(this.reason)
    }
    return this.#controller.signal
  }

  /** The first reason wins; later aborts change nothing. */
  abort (reason: AbortReason): void {
    if (this.reason !== undefined) return
    this.reason = reason
    this.#controller?.abort(reason)
    const listeners = this.#listeners
    this.#listeners = undefined
    for (const listener of listeners ?? []) {
      try {
        listener(reason)
      } catch { /* the tool's own listener: its failure does not stop the abort */ }
    }
    this.#onAbort?.(reason)
  }

  /** The tool's `ctx.onAbort`: `listener` runs once on abort (at once when aborted already); the function returned stops it. */
  listen (listener: (reason: AbortReason) => void): () => void {
    if (this.reason !== undefined) {
      listener(this.reason)
      return noop
    }
    const listeners = (this.#listeners ??= [])
    listeners.push(listener)
    return () => {
      const at = listeners.indexOf(listener)
      if (at !== -1) listeners.splice(at, 1)
    }
  }

  /** Set (or clear) what runs on abort; runs at once when the call is already aborted. */
  onAbort (listener: ((reason: AbortReason) => void) | undefined): void {
    this.#onAbort = listener
    if (listener !== undefined && this.reason !== undefined) listener(this.reason)
  }

  /** Abort on the caller's signal, until `unfollow`. */
  follow (signal: CancelSignal | undefined): void {
    if (signal === undefined) return
    this.#cancel ??= () => { this.abort(new AbortReason('cancelled', 'the caller cancelled the call')) }
    if (signal.aborted) {
      this.#cancel()
      return
    }
    signal.addEventListener('abort', this.#cancel, ONCE)
    ;(this.#followed ??= []).push(signal)
  }

  /** Stop listening to every followed signal: the call settled. */
  unfollow (): void {
    if (this.#followed === undefined) return
    for (const signal of this.#followed) signal.removeEventListener('abort', this.#cancel!)
    this.#followed = undefined
  }
}

const ONCE = Object.freeze({ once: true })
const noop = (): void => {}
