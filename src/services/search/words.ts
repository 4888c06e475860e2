/**
 * How text becomes search terms, the same for the tools indexed and for a query: words of
 * letters and digits, `snake_case`, `kebab-case` and `camelCase` split into their words,
 * lower-cased. One linear pass of two regular expressions: no input makes it slow.
 */
const WORD = /[\p{L}\p{N}]+/gu
/** Where a camelCase word splits: `getHTTPStatus` → get, HTTP, Status. */
const CASE_BOUNDARY = /(?<=[\p{Ll}\p{N}])(?=\p{Lu})|(?<=\p{Lu})(?=\p{Lu}\p{Ll})/u

export function wordsOf (text: string): string[] {
  const words: string[] = []
  for (const [word] of text.matchAll(WORD)) {
    for (const part of word.split(CASE_BOUNDARY)) words.push(part.toLowerCase())
  }
  return words
}

/**
 * Words too common to tell tools apart: they would only add noise to a plain-language query
 * ("find the file that has ..."), and as prefixes they would match half the vocabulary.
 */
export const STOP_WORDS: ReadonlySet<string> = new Set([
  'a', 'an', 'and', 'are', 'as', 'at', 'be', 'by', 'can', 'do', 'for', 'from', 'has', 'have', 'how', 'i', 'if', 'in',
  'into', 'is', 'it', 'its', 'me', 'my', 'of', 'on', 'or', 'our', 'so', 'some', 'that', 'the', 'their', 'then', 'this',
  'to', 'up', 'us', 'want', 'was', 'we', 'what', 'when', 'which', 'who', 'will', 'with', 'you', 'your',
])
