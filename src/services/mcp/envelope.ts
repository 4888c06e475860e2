import type { InputIssue } from '../../core/errors.js'
import type { InputBounds } from '../../core/input-bounds.js'

/** Levels a `tools/call` message holds its input under (`params.arguments`). */
const ENVELOPE_DEPTH = 2

/**
 * The bounds of a whole message: room for the envelope, since the pipeline bounds the input
 * itself exactly (and answers a too-deep input as the call's failure, as for any bad input).
 */
export function envelopeBounds (bounds: InputBounds): InputBounds {
  return { ...bounds, depth: bounds.depth + ENVELOPE_DEPTH }
}

/** The error message of a message past its bounds, naming the setting. */
export function tooComplexMessage (breach: InputIssue): string {
  const setting = breach.code === 'too_deep' ? `MAX_INPUT_DEPTH, and ${ENVELOPE_DEPTH} levels for the envelope` : breach.code === 'too_many_keys' ? 'MAX_INPUT_KEYS' : 'MAX_INPUT_ITEMS'
  return `the message ${breach.message} (${setting})`
}
