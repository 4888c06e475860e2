import type { DeliveryClaim } from './claims.js'
import { signedHeaders } from './signature.js'
import type { WebhookMessage } from './approval-event.js'

/** What became of a delivery: sent (2xx), tried again, given up after its last attempt, or never queued. */
export type DeliveryOutcome = 'delivered' | 'retried' | 'failed' | 'dropped'

export interface WebhookDeliveryOptions {
  readonly urls: readonly string[]
  /** `whsec_...` */
  readonly secret: string
  /** Attempts per message and URL, the first included. */
  readonly attempts: number
  /** The delay before the first retry; it doubles for each next one, with jitter. */
  readonly backoffMs: number
  readonly timeoutMs: number
  /** Deliveries under way (first attempt or waiting to retry) beyond which new ones are dropped. */
  readonly maxQueued?: number
  readonly claim?: DeliveryClaim
  readonly onOutcome?: (outcome: DeliveryOutcome, url: string) => void
  readonly now?: () => number
}

const DEFAULT_MAX_QUEUED = 1_000
/** Longest wait between two attempts, whatever the backoff doubled to. */
const MAX_DELAY_MS = 10 * 60_000

/**
 * Posts signed messages to the configured URLs, off the caller's path: `send` returns at once,
 * each delivery retries a non-2xx answer, a timeout or a refused connection with exponential
 * backoff until its attempts run out. Bounded: past `maxQueued` deliveries under way a new one
 * is dropped and counted. Redirects are not followed (a 3xx is a failure).
 */
export class WebhookDeliveries {
  readonly #options: WebhookDeliveryOptions
  readonly #underway = new Set<AbortController>()
  #closed = false

  constructor (options: WebhookDeliveryOptions) {
    this.#options = options
  }

  /** Deliveries under way now. */
  get underway (): number {
    return this.#underway.size
  }

  send (message: WebhookMessage): void {
    if (this.#closed) return
    for (const url of this.#options.urls) {
      if (this.#underway.size >= (this.#options.maxQueued ?? DEFAULT_MAX_QUEUED)) {
        this.#options.onOutcome?.('dropped', url)
        continue
      }
      const stop = new AbortController()
      this.#underway.add(stop)
      void this.#deliver(message, url, stop.signal).finally(() => { this.#underway.delete(stop) })
    }
  }

  /** Stop every delivery under way (shutdown); it is neither retried nor counted further. */
  close (): number {
    this.#closed = true
    const stopped = this.#underway.size
    for (const stop of this.#underway) stop.abort()
    this.#underway.clear()
    return stopped
  }

  async #deliver (message: WebhookMessage, url: string, signal: AbortSignal): Promise<void> {
    const { attempts, backoffMs, claim, onOutcome } = this.#options
    if (claim !== undefined && !await claim(message.id, url)) return // another replica delivers it
    for (let attempt = 1; !signal.aborted; attempt++) {
      if (await this.#attempt(message, url, signal)) {
        onOutcome?.('delivered', url)
        return
      }
      if (signal.aborted) return
      if (attempt >= attempts) {
        onOutcome?.('failed', url)
        return
      }
      onOutcome?.('retried', url)
      const base = Math.min(backoffMs * 2 ** (attempt - 1), MAX_DELAY_MS)
      await sleep(base / 2 + Math.random() * base / 2, signal)
    }
  }

  async #attempt (message: WebhookMessage, url: string, signal: AbortSignal): Promise<boolean> {
    const now = this.#options.now?.() ?? Date.now()
    try {
      const response = await fetch(url, {
        method: 'POST',
        redirect: 'manual',
        headers: { 'content-type': 'application/json', 'user-agent': 'toolgate-webhooks', ...signedHeaders(this.#options.secret, message.id, message.body, now) },
        body: message.body,
        signal: AbortSignal.any([signal, AbortSignal.timeout(this.#options.timeoutMs)]),
      })
      await response.body?.cancel()
      return response.status >= 200 && response.status < 300
    } catch {
      return false // refused, reset, timed out: all worth another attempt
    }
  }
}

function sleep (ms: number, signal: AbortSignal): Promise<void> {
  return new Promise(resolve => {
    const timer = setTimeout(done, ms)
    timer.unref()
    signal.addEventListener('abort', done, { once: true })
    function done (): void {
      clearTimeout(timer)
      signal.removeEventListener('abort', done)
      resolve()
    }
  })
}
