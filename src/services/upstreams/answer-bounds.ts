import { UpstreamError } from '../../core/errors.js'
import { boundBreachOf, MAX_DEPTH_BOUND, type InputBounds } from '../../core/input-bounds.js'

/**
 * How deep an upstream's answer may nest: as deep as the deepest input may be set to. Past
 * it, every step that walks an answer (parseOutput, the response's encoding, the idempotency
 * store) could run out of stack; the upstream broke the exchange, and says so, before any runs.
 */
const ANSWER_BOUNDS: InputBounds = { depth: MAX_DEPTH_BOUND, keys: Number.POSITIVE_INFINITY, items: Number.POSITIVE_INFINITY }

/** `value` as the upstream answered it, or a 502 naming `who` when it nests too deep. */
export function boundedAnswer<T> (value: T, who: string): T {
  const breach = boundBreachOf(value, ANSWER_BOUNDS)
  if (breach !== undefined) throw new UpstreamError('TOOLGATE_UPSTREAM_FAILED', `${who} answered JSON that ${breach.message}`)
  return value
}
