export interface FailureThrottleOptions {
  /** Failed authentications one address may make per window before it is slowed down; 0: off. */
  readonly maxFailures: number
  readonly windowMs: number
  /** Addresses tracked at once (the oldest is forgotten first), and credentials remembered as good. */
  readonly maxTracked?: number
  readonly now?: () => number
}

interface Window { start: number, failures: number }

const MAX_GOOD = 4_096

/**
 * Slows down a source address that keeps failing to authenticate, without letting it lock a
 * real principal out. Past `maxFailures` in a window, the address's *unproven* credentials are
 * refused before they are even checked (so guessing stops paying), while a credential that
 * authenticated successfully before still gets in from anywhere, that address included: an
 * attacker sharing a principal's address (a NAT, a proxy) cannot shut it out. Everything is
 * bounded; nothing is shared between processes.
 */
export class AuthFailureThrottle {
  readonly #windows = new Map<string, Window>()
  readonly #good = new Set<string>()
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

  /** Milliseconds until `address` may try an unproven credential again; 0 when it may now. */
  waitFor (address: string, credential: string | undefined): number {
    if (this.#windows.size === 0) return 0
    const window = this.#windows.get(address)
    if (window === undefined || window.failures < this.#max) return 0
    const left = window.start + this.#windowMs - this.#now()
    if (left <= 0) {
      this.#windows.delete(address)
      return 0
    }
    return credential !== undefined && this.#good.has(credential) ? 0 : left
  }

  failed (address: string): void {
    const now = this.#now()
    let window = this.#windows.get(address)
    if (window === undefined || window.start + this.#windowMs <= now) {
      this.#windows.delete(address)
      if (this.#windows.size >= this.#maxTracked) this.#windows.delete(this.#windows.keys().next().value!)
      this.#windows.set(address, window = { start: now, failures: 0 })
    }
    window.failures++
  }

  /** `credential` proved itself: it passes the throttle from now on (it is still verified every time). */
  succeeded (credential: string): void {
    if (this.#good.has(credential)) return
    // Tokens run to a kilobyte or two: remember fewer of them than addresses.
    if (this.#good.size >= Math.min(this.#maxTracked, MAX_GOOD)) this.#good.delete(this.#good.values().next().value!)
    this.#good.add(credential)
  }
}
