import type { GatewayError } from '../../core/errors.js'
import { invalidInput } from '../../core/input-issues.js'
import { wordsOf } from './words.js'

/** How many hits a search answers when it does not say, and at most. */
export const SEARCH_LIMIT = { default: 8, max: 25 } as const

/** Longest query, in UTF-16 code units after trimming: a sentence, not a document. */
export const MAX_QUERY_LENGTH = 256
/**
 * Most words a query may have: each distinct word is one bounded walk of the index, so this
 * bounds the work; a task said in one plain sentence runs to some twenty words.
 */
const MAX_QUERY_WORDS = 32
/** C0 and C1 controls besides tab, line feed and carriage return (whitespace here), and lone surrogates. */
// Matching control characters is the point here.
// eslint-disable-next-line no-control-regex
const REFUSED = /[\u0000-\u0008\u000b\u000c\u000e-\u001f\u007f-\u009f]|\p{Cs}/u

/**
 * A search query as a caller sent it, checked: a string of 1 to 256 characters after trimming,
 * well-formed Unicode without control characters, with at least one and at most 32 words.
 * Anything else is a 400 (`TOOLGATE_INVALID_INPUT`) naming `pointer`, before the index is touched.
 */
export function queryOf (raw: unknown, pointer = '/query'): string {
  if (typeof raw !== 'string') throw invalid(pointer, 'the query must be a string of words', 'invalid_type')
  const query = raw.trim()
  if (query.length === 0) throw invalid(pointer, 'the query is empty: say in a few words what the tool should do', 'too_small')
  if (query.length > MAX_QUERY_LENGTH) throw invalid(pointer, `the query is longer than ${MAX_QUERY_LENGTH} characters: say in a few words what the tool should do`, 'too_big')
  if (REFUSED.test(query)) throw invalid(pointer, 'the query holds control characters or broken Unicode', 'invalid_string')
  const words = wordsOf(query).length
  if (words === 0) throw invalid(pointer, 'the query has no words (letters or digits)', 'too_small')
  if (words > MAX_QUERY_WORDS) throw invalid(pointer, `the query has ${words} words; at most ${MAX_QUERY_WORDS}`, 'too_big')
  return query
}

function invalid (pointer: string, message: string, code: string): GatewayError {
  return invalidInput({ pointer, message, code })
}
