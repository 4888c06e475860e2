import { TokenFailure, type Token } from './token-endpoint.js'

/*
 * Tokens kept until shortly before they expire, one fetch at a time per key however many calls
 * wait, and, with a shared store (Redis), one fetch at a time across replicas too: the replica
 * that claims the key fetches and writes the token; the others read it there. Bounded: the
 * least recently used key goes first.
 */

/** What replicas share: sealed tokens and the right to fetch one. */
export interface SharedTokens {
  read (key: string): Promise<Token | undefined>
  /** The right to fetch `key`'s token for `ms`; false while another replica holds it. */
  claim (key: string, ms: number): Promise<boolean>
  /** Store the token (until it expires) and give up the claim. */
  write (key: string, token: Token): Promise<void>
  release (key: string): Promise<void>
  /** Forget `key`'s token if it is still `value` (another replica may have written a newer one). */
  drop (key: string, value: string): Promise<void>
  /** Forget `key`'s token, whatever it is. */
  remove (key: string): Promise<void>
}

export interface Obtained {
  readonly token: Token
  /** Fetched for this wait, not found kept: a refusal of it by the upstream is no stale token. */
  readonly fresh: boolean
}

/** A token is used up to this long before it expires (or a quarter of its life, when shorter). */
const EARLY_MS = 30_000
/** How often a replica waiting for another's fetch looks for the token. */
const POLL_MS = 25
/** A replica that claimed a fetch and died frees the claim after this long. */
const CLAIM_MS = 15_000

export class TokenCache {
  readonly #entries = new Map<string, Token & { readonly obtainedAt: number }>()
  readonly #fetching = new Map<string, Promise<Token>>()
  readonly #shared: SharedTokens | undefined
  readonly #maxEntries: number
  readonly #now: () => number

  constructor (options: { readonly shared?: SharedTokens, readonly maxEntries?: number, readonly now?: () => number } = {}) {
    this.#shared = options.shared
    this.#maxEntries = options.maxEntries ?? 10_000
    this.#now = options.now ?? Date.now
  }

  /** Synchronous when the token is kept: the common call pays no promise. */
  kept (key: string): Token | undefined {
    const entry = this.#entries.get(key)
    if (entry === undefined) return undefined
    if (!this.#usable(entry, entry.obtainedAt)) {
      this.#entries.delete(key)
      return undefined
    }
    return entry
  }

  /**
   * The token of `key`: kept, or fetched by `fetch` (once, however many wait). Gives up after
   * `waitMs` with an `unavailable` failure (the fetch goes on for whoever comes next).
   */
  async get (key: string, fetch: () => Promise<Token>, waitMs: number): Promise<Obtained> {
    const kept = this.kept(key)
    if (kept !== undefined) return { token: kept, fresh: false }
    let fetching = this.#fetching.get(key)
    const mine = fetching === undefined
    if (fetching === undefined) {
      const started = this.#now()
      fetching = this.#obtain(key, fetch, started).finally(() => { this.#fetching.delete(key) })
      this.#fetching.set(key, fetching)
    }
    const token = await bounded(fetching, waitMs)
    return { token, fresh: mine || this.#shared === undefined }
  }

  /** A token obtained elsewhere (a person's link just made): kept here and shared. */
  async put (key: string, token: Token): Promise<void> {
    this.#keep(key, token, this.#now())
    await this.#shared?.write(key, token).catch(() => undefined)
  }

  /** Forget `key`'s token whatever it is (an unlink). */
  async forget (key: string): Promise<void> {
    this.#entries.delete(key)
    await this.#shared?.remove(key)
  }

  /** The upstream refused `value`: forget it here and in the shared store. */
  async drop (key: string, value: string): Promise<void> {
    if (this.#entries.get(key)?.value === value) this.#entries.delete(key)
    await this.#shared?.drop(key, value).catch(() => undefined)
  }

  async #obtain (key: string, fetch: () => Promise<Token>, started: number): Promise<Token> {
    const shared = this.#shared
    if (shared === undefined) return this.#keep(key, await fetch(), started)
    for (;;) {
      let found: Token | undefined
      let claimed: boolean
      try {
        found = await shared.read(key)
        claimed = found === undefined || !this.#usable(found, this.#now()) ? await shared.claim(key, CLAIM_MS) : false
      } catch {
        // The shared store is down: this replica fetches its own rather than failing the call.
        return this.#keep(key, await fetch(), started)
      }
      if (found !== undefined && !claimed && this.#usable(found, this.#now())) return this.#keep(key, found, this.#now())
      if (claimed) {
        try {
          const token = await fetch()
          await shared.write(key, token).catch(() => undefined)
          return this.#keep(key, token, started)
        } catch (error) {
          await shared.release(key).catch(() => undefined)
          throw error
        }
      }
      await new Promise(resolve => setTimeout(resolve, POLL_MS))
    }
  }

  #keep (key: string, token: Token, obtainedAt: number): Token {
    this.#entries.delete(key)
    this.#entries.set(key, { ...token, obtainedAt })
    if (this.#entries.size > this.#maxEntries) this.#entries.delete(this.#entries.keys().next().value!)
    return token
  }

  #usable (token: Token, obtainedAt: number): boolean {
    const early = Math.min(EARLY_MS, Math.max(0, (token.expiresAt - obtainedAt) / 4))
    return token.expiresAt - early > this.#now()
  }
}

async function bounded<T> (promise: Promise<T>, ms: number): Promise<T> {
  let timer: NodeJS.Timeout | undefined
  try {
    return await Promise.race([promise, new Promise<never>((_resolve, reject) => {
      timer = setTimeout(() => { reject(new TokenFailure('unavailable', `no token within ${ms} ms`)) }, ms)
    })])
  } finally {
    clearTimeout(timer)
  }
}
