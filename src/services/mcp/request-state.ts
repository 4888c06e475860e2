import { createCipheriv, createDecipheriv, hkdfSync, randomBytes } from 'node:crypto'
import { z } from 'zod'

/*
 * MCP 2026-07-28's `requestState` travels through the client and comes back on the retry, so
 * on re-entry it is attacker-controlled input. Ours decides which approval a call may run
 * under, so it is sealed with AES-256-GCM: nobody without the key can read it (it names a
 * principal and an approval) or make one the gateway would open, and a changed byte fails.
 */

/** A call waiting for a person's approval: the approval, for whom, until when, and its nonce. */
export const ApprovalState = z.object({
  /** Format version: a state sealed by an older gateway is refused, never misread. */
  v: z.literal(1),
  /** The approval this call waits for. */
  approval: z.string().min(1).max(64),
  /** The continuation nonce, live on the approval record until redeemed. */
  nonce: z.string().min(1).max(64),
  principal: z.string().min(1),
  tool: z.string().min(1),
  /** Epoch ms after which the state is refused. */
  expiresAt: z.number().int(),
}).strict()
export type ApprovalState = z.infer<typeof ApprovalState>

/** A running call that asked its caller a question: where it waits (this process), for whom, until when. */
export const QuestionState = z.object({
  v: z.literal(1),
  /** The parked call's id, in the process that runs it. */
  question: z.string().min(1).max(64),
  principal: z.string().min(1),
  tool: z.string().min(1),
  expiresAt: z.number().int(),
}).strict()
export type QuestionState = z.infer<typeof QuestionState>

/** A call that ran nothing because its caller must first do something elsewhere (link an account): the retry runs it anew. */
const RetryState = z.object({
  v: z.literal(1),
  retry: z.literal('link'),
  principal: z.string().min(1),
  tool: z.string().min(1),
  expiresAt: z.number().int(),
}).strict()

/** What a sealed state says: the call it continues. */
export const StatePayload = z.union([ApprovalState, QuestionState, RetryState])
export type StatePayload = z.infer<typeof StatePayload>

const IV_BYTES = 12
const TAG_BYTES = 16
/** Associated data: a state made for anything else (another format, another use) never opens. */
const CONTEXT = Buffer.from('toolgate mcp requestState v1')
/** Longer than any state we make by far; a bigger one is refused before any work. */
const MAX_STATE_CHARS = 4_096

export class RequestStateSeal {
  readonly #key: Buffer

  /** `secret`: any high-entropy bytes (at least 32); the cipher key is derived from them. */
  constructor (secret: Uint8Array) {
    if (secret.byteLength < 32) throw new Error('the requestState secret needs at least 32 bytes')
    this.#key = Buffer.from(hkdfSync('sha256', secret, Buffer.alloc(0), CONTEXT, 32))
  }

  /** A fresh random secret: enough for one process, not for replicas (they must share one). */
  static randomSecret (): Buffer {
    return randomBytes(32)
  }

  seal (payload: StatePayload): string {
    const iv = randomBytes(IV_BYTES)
    const cipher = createCipheriv('aes-256-gcm', this.#key, iv).setAAD(CONTEXT)
    const body = Buffer.concat([cipher.update(JSON.stringify(payload), 'utf8'), cipher.final()])
    return Buffer.concat([iv, body, cipher.getAuthTag()]).toString('base64url')
  }

  /** The payload, or undefined for anything this key did not seal exactly so. */
  open (state: string): StatePayload | undefined {
    if (state.length > MAX_STATE_CHARS || !/^[A-Za-z0-9_-]+$/.test(state)) return undefined
    const bytes = Buffer.from(state, 'base64url')
    if (bytes.length <= IV_BYTES + TAG_BYTES) return undefined
    try {
      const decipher = createDecipheriv('aes-256-gcm', this.#key, bytes.subarray(0, IV_BYTES), { authTagLength: TAG_BYTES })
        .setAAD(CONTEXT)
        .setAuthTag(bytes.subarray(bytes.length - TAG_BYTES))
      const text = Buffer.concat([decipher.update(bytes.subarray(IV_BYTES, bytes.length - TAG_BYTES)), decipher.final()]).toString('utf8')
      const parsed = StatePayload.safeParse(JSON.parse(text))
      return parsed.success ? parsed.data : undefined
    } catch {
      return undefined // a wrong tag, or not ours
    }
  }
}

/** How long a shared secret is trusted before Redis is asked again. */
const SHARED_SECRET_REFRESH_MS = 60_000

/**
 * The seal of this gateway: from the configured secret; else from a secret shared by the
 * replicas (`shared` stores or reads it, refreshed every minute); else a random one for this
 * process. A failed read of the shared one fails that call (503) and is asked again next time.
 */
export function sealSource (configured: string | undefined, shared?: (candidate: Buffer) => Promise<Buffer>): () => Promise<RequestStateSeal> {
  if (configured !== undefined || shared === undefined) {
    const seal = new RequestStateSeal(configured === undefined ? RequestStateSeal.randomSecret() : Buffer.from(configured, 'utf8'))
    return async () => seal
  }
  let candidate = RequestStateSeal.randomSecret()
  let current: { seal: RequestStateSeal, until: number } | undefined
  return async () => {
    if (current !== undefined && current.until > Date.now()) return current.seal
    const secret = await shared(candidate)
    candidate = secret
    current = { seal: new RequestStateSeal(secret), until: Date.now() + SHARED_SECRET_REFRESH_MS }
    return current.seal
  }
}
