/*
 * The outcome vocabulary on its own, so the error catalogue can name each code's outcome without
 * importing the call record (and through it the tool and schema modules, which import errors).
 */

/**
 * How a call ended, one value per pipeline result. These are the `outcome` metrics label
 * values, so they are a closed set: adding one is a deliberate change.
 */
export const OUTCOMES = [
  'ok', 'dry_run', 'replayed', 'approval_pending',
  'invalid_input', 'unauthenticated', 'forbidden', 'not_found', 'conflict', 'rate_limited',
  'unavailable', 'timeout', 'cancelled', 'unknown',
  'tool_error', 'tool_failed', 'bad_definition', 'invalid_output', 'internal',
] as const
export type Outcome = (typeof OUTCOMES)[number]
