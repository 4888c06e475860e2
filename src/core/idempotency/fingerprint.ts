import { createHash } from 'node:crypto'

/**
 * SHA-256 of the parsed input in a canonical JSON form (object keys sorted), so the same
 * input sent with its keys in another order is the same call.
 */
export function fingerprintOf (input: unknown): string {
  return createHash('sha256').update(canonicalJson(input)).digest('base64url')
}

export function canonicalJson (value: unknown): string {
  return JSON.stringify(value, (_key, v: unknown) => {
    if (typeof v === 'bigint') return v.toString()
    if (v === null || typeof v !== 'object' || Array.isArray(v) || v instanceof Date) return v
    const sorted: Record<string, unknown> = {}
    for (const key of Object.keys(v).sort()) sorted[key] = (v as Record<string, unknown>)[key]
    return sorted
  }) ?? 'undefined'
}

/** 1 to 255 visible ASCII characters (the IETF draft leaves the format open; this keeps logs and Redis keys safe). */
export const IDEMPOTENCY_KEY = /^[\x21-\x7e]{1,255}$/
