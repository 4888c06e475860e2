export interface FailureThrottleOptions {
  /** Failed authentications one address may make per window before it is slowed down; 0: off. */
  readonly maxFailures: number
  readonly windowMs: number
  /** Addresses tracked at once (the oldest is forgotten first). */
  readonly maxTracked?: number
  readonly now?: () => number
}

interface Window { start: number, failures: number }

/**
 * Slows down a source address that keeps failing to authenticate, and only its failures. The
 * credential is always checked first (an API key is one hash and a lookup, a token one bounded
 * signature check, so the work a request can cost stays bounded whatever it carries): a valid
 * credential gets in from any address, however much that address failed, so callers sharing
 * an address (a NAT, a proxy) or an attacker's flood cannot shut a principal out. What the
 * throttle changes is the answer to a *failure*: past `maxFailures` in a window, 429 with
 * `Retry-After` instead of 401, which tells a client to back off. Nothing is remembered about
 * credentials (no proof to flush, nothing that tells one spelling of a key from another).
 * Everything is bounded; nothing is shared between processes.
 */
export class AuthFailureThrottle {
  readonly #windows = new Map<string, Window>()
  readonly #max: number
  readonly #windowMs: number
  readonly #maxTracked: number
  readonly #now: () => number

  constructor (options: FailureThrottleOptions) {
    this.#max = options.maxFailures
    this.#windowMs = options.windowMs
    this.#maxTracked = options.maxTracked ?? 10_000
    this.#now = options.now ?? Date.now
  }

  get enabled (): boolean {
    return this.#max > 0
  }

  /**
   * Count one failure of `address`: the milliseconds it should wait before trying again once
   * it is past the limit in this window (the failure then answers 429), 0 while it is not.
   */
  failed (address: string): number {
    const now = this.#now()
    let window = this.#windows.get(address)
    if (window === undefined || window.start + this.#windowMs <= now) {
      this.#windows.delete(address)
      if (this.#windows.size >= this.#maxTracked) this.#windows.delete(this.#windows.keys().next().value!)
      this.#windows.set(address, window = { start: now, failures: 0 })
    }
    window.failures++
    return window.failures > this.#max ? window.start + this.#windowMs - now : 0
  }
}
