import type { ContentBlock } from '../content.js'

/**
 * Idempotency records, scoped by (principal, tool, key). The store is the only shared state
 * that decides "run it" versus "replay it", so `claim` must be atomic: of two concurrent
 * claims of one key exactly one gets `claimed`.
 */

/** What a finished call answered, stored once `execute` began, errors included. */
export type StoredResult =
  | { readonly type: 'value', readonly value: unknown, readonly content?: readonly ContentBlock[], readonly structuredContent?: unknown }
  | { readonly type: 'error', readonly family: 'gateway' | 'tool', readonly status: number, readonly code: string, readonly message: string, readonly extensions: Record<string, unknown> }

export type Claim =
  | { readonly state: 'claimed' }
  | { readonly state: 'running', readonly fingerprint: string }
  | { readonly state: 'done', readonly fingerprint: string, readonly result: StoredResult }
  /** A new key is refused: the owner's share (`owner`) or the whole store (`store`) is full; nothing was evicted. */
  | { readonly state: 'full', readonly scope: 'owner' | 'store', readonly retryAfterMs: number }

export interface IdempotencyStore {
  /**
   * Claim `key` for a call with this input fingerprint, or tell what already holds it. `owner`
   * (the idempotency scope, a principal) lets a bounded store keep per-owner shares.
   */
  claim (key: string, fingerprint: string, ttlMs: number, owner?: string): Promise<Claim>
  /** Store the final result of the claimed call; it expires `ttlMs` from now. */
  complete (key: string, fingerprint: string, result: StoredResult, ttlMs: number, owner?: string): Promise<void>
  /** Free a claim whose call never reached `execute`: the key may be used again. */
  release (key: string, owner?: string): Promise<void>
  close? (): Promise<void>
}

export class StoreUnavailableError extends Error {
  constructor (message: string, options?: ErrorOptions) {
    super(message, options)
    this.name = 'StoreUnavailableError'
  }
}
