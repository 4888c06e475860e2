import { createHmac } from 'node:crypto'

/**
 * Standard Webhooks signing: HMAC-SHA256 over `{id}.{timestamp}.{body}` with the secret's
 * bytes (the base64 after `whsec_`), sent as `v1,<base64>`. The timestamp is the attempt's own,
 * in seconds, so a receiver's replay window starts at each delivery, not at the event.
 */
export function signedHeaders (secret: string, id: string, body: string, nowMs: number): Record<string, string> {
  const timestamp = String(Math.floor(nowMs / 1000))
  const key = Buffer.from(secret.slice('whsec_'.length), 'base64')
  const signature = createHmac('sha256', key).update(`${id}.${timestamp}.${body}`).digest('base64')
  return { 'webhook-id': id, 'webhook-timestamp': timestamp, 'webhook-signature': `v1,${signature}` }
}
