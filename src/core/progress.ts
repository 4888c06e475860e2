import { GatewayError } from './errors.js'

/**
 * How far a call has got, as MCP's `notifications/progress` says it: `progress` so far, the
 * `total` when known, a line for a person. Both numbers may be fractions.
 */
export interface ProgressUpdate {
  readonly progress: number
  readonly total?: number
  readonly message?: string
}

/**
 * The shortest gap between two updates a caller is told of. Updates that come faster are
 * coalesced, the latest kept and told when the gap has passed: a tool reporting every item of a
 * million-item loop costs the caller ten messages a second, not a million.
 */
export const PROGRESS_INTERVAL_MS = 100

/**
 * The `ctx.progress` of one call: checks each update, keeps `progress` increasing (MCP requires
 * it; a value not above the last told is dropped), paces updates to one per
 * `PROGRESS_INTERVAL_MS`, and goes quiet once the call is settled: an update from work still
 * running after the answer is never told. The listener is the host's: a failure of it never
 * reaches the tool.
 */
export class ProgressReporter {
  readonly #listener: (update: ProgressUpdate) => void
  #last = -Infinity
  #toldAt = -Infinity
  #held: ProgressUpdate | undefined
  #timer: ReturnType<typeof setTimeout> | undefined
  #closed = false

  constructor (listener: (update: ProgressUpdate) => void) {
    if (typeof listener !== 'function') {
      throw new GatewayError('TOOLGATE_INVALID_INPUT', 'onProgress must be a function', { errors: [{ pointer: '/onProgress', message: 'onProgress must be a function', code: 'invalid_type' }] })
    }
    this.#listener = listener
  }

  /** `ctx.progress`: an arrow, so that `const { progress } = ctx` works. */
  readonly report = (update: ProgressUpdate): void => {
    const checked = checkUpdate(update)
    if (this.#closed || checked.progress <= this.#last) return
    this.#last = checked.progress
    const wait = this.#toldAt + PROGRESS_INTERVAL_MS - performance.now()
    if (wait <= 0 && this.#timer === undefined) {
      this.#tell(checked)
      return
    }
    this.#held = checked
    this.#timer ??= setTimeout(() => {
      this.#timer = undefined
      const held = this.#held
      this.#held = undefined
      if (held !== undefined && !this.#closed) this.#tell(held)
    }, Math.max(0, wait)).unref()
  }

  /** The call is settled: nothing more is told, and an update held back is dropped (the answer supersedes it). */
  close (): void {
    this.#closed = true
    this.#held = undefined
    if (this.#timer !== undefined) clearTimeout(this.#timer)
    this.#timer = undefined
  }

  #tell (update: ProgressUpdate): void {
    this.#toldAt = performance.now()
    try {
      this.#listener(update)
    } catch { /* the host's listener: its failure is not the tool's */ }
  }
}

/** A malformed update is the tool's bug, told to it at once (a `TypeError`), never sent on. */
function checkUpdate (update: ProgressUpdate): ProgressUpdate {
  if (typeof update !== 'object' || update === null) throw new TypeError('ctx.progress takes { progress, total?, message? }')
  const { progress, total, message } = update
  if (typeof progress !== 'number' || !Number.isFinite(progress)) throw new TypeError('ctx.progress: progress must be a finite number')
  if (total !== undefined && (typeof total !== 'number' || !Number.isFinite(total))) throw new TypeError('ctx.progress: total must be a finite number')
  if (message !== undefined && typeof message !== 'string') throw new TypeError('ctx.progress: message must be a string')
  // A copy of the known fields only: nothing else the tool's object carries goes on the wire.
  return { progress, ...(total === undefined ? {} : { total }), ...(message === undefined ? {} : { message }) }
}
