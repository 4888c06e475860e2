import { TokenFailure, type Token } from './token-endpoint.js'

/*
 * Tokens kept until shortly before they expire, one fetch at a time per key however many calls
 * wait, and, with a shared store (Redis), one fetch at a time across replicas too: the replica
 * that claims the key fetches and writes the token; the others read it there. Bounded: the
 * least recently used key goes first.
 */

/** A token as kept: when it was obtained decides how early it is dropped (a quarter of its life at most). */
export interface KeptToken extends Token {
  readonly obtainedAt: number
}

/** What replicas share: sealed tokens and the right to fetch one. */
export interface SharedTokens {
  read (key: string): Promise<KeptToken | undefined>
  /** The right to fetch `key`'s token for `ms`; false while another replica holds it. */
  claim (key: string, ms: number): Promise<boolean>
  /** Store the token (until it expires) and give up the claim. */
  write (key: string, token: KeptToken): Promise<void>
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
  readonly #entries = new Map<string, KeptToken>()
  readonly #fetching = new Map<string, Promise<{ readonly token: Token, readonly fetched: boolean }>>()
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
    if (fetching === undefined) {
      const started = this.#now()
      fetching = this.#obtain(key, fetch, started).finally(() => { this.#fetching.delete(key) })
      this.#fetching.set(key, fetching)
    }
    // Fresh only when fetched for this wait: one read from another replica may have been revoked since.
    const { token, fetched } = await bounded(fetching, waitMs)
    return { token, fresh: fetched }
  }

  /** A token obtained elsewhere (a person's link just made): kept here and shared. */
  async put (key: string, token: Token): Promise<void> {
    const kept = this.#keep(key, token, this.#now())
    await this.#shared?.write(key, { value: kept.value, expiresAt: kept.expiresAt, obtainedAt: this.#now() }).catch(() => undefined)
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

  async #obtain (key: string, fetch: () => Promise<Token>, started: number): Promise<{ readonly token: Token, readonly fetched: boolean }> {
    const shared = this.#shared
    if (shared === undefined) return { token: this.#keep(key, await fetch(), started), fetched: true }
    const until = this.#now() + CLAIM_MS + 2_000
    for (;;) {
      let found: KeptToken | undefined
      let claimed: boolean
      try {
        found = await shared.read(key)
        claimed = found === undefined || !this.#usable(found, found.obtainedAt) ? await shared.claim(key, CLAIM_MS) : false
      } catch {
        // The shared store is down: this replica fetches its own rather than failing the call.
        return { token: this.#keep(key, await fetch(), started), fetched: true }
      }
      if (found !== undefined && !claimed && this.#usable(found, found.obtainedAt)) return { token: this.#keep(key, found, found.obtainedAt), fetched: false }
      if (claimed) {
        let token: Token
        try {
          token = await fetch()
        } catch (error) {
          await shared.release(key).catch(() => undefined)
          throw error
        }
        const kept = this.#keep(key, token, started)
        // Written (and the claim given up) with what the claim's fetch obtained; a write that fails frees the claim.
        await shared.write(key, { value: kept.value, expiresAt: kept.expiresAt, obtainedAt: started }).catch(async () => { await shared.release(key).catch(() => undefined) })
        return { token: kept, fetched: true }
      }
      // Another replica fetches: its token shows up here, or its claim lapses and this one fetches.
      if (this.#now() > until) throw new TokenFailure('unavailable', 'another replica has been fetching this token for too long')
      await new Promise(resolve => setTimeout(resolve, POLL_MS))
    }
  }

  /** Kept here without anything but the access token (a link's refresh token never enters the cache). */
  #keep (key: string, token: Token, obtainedAt: number): Token {
    const kept = { value: token.value, expiresAt: token.expiresAt, obtainedAt }
    this.#entries.delete(key)
    this.#entries.set(key, kept)
    if (this.#entries.size > this.#maxEntries) this.#entries.delete(this.#entries.keys().next().value!)
    return kept
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
      timer = setTimeout(() => { reject(new TokenFailure('unavailable', `no token within ${ms} ms`, { waited: true })) }, ms)
    })])
  } finally {
    clearTimeout(timer)
  }
}
