import { defineSchema, defineTool } from 'toolgate'

/*
 * `text_stats`, written without zod: its schemas are plain `defineSchema({ jsonSchema, parse })`
 * adapters. The JSON Schema is what callers, OpenAPI and models see; `parse` enforces exactly
 * that and throws an error whose `issues` carry paths, so a 400 points at each bad field.
 */

const MAX_TEXT = 10_000

interface Input { readonly text: string, readonly top: number }
interface WordCount { readonly word: string, readonly count: number }
interface Output { readonly characters: number, readonly words: number, readonly lines: number, readonly topWords: readonly WordCount[] }
type Issue = { readonly message: string, readonly path: readonly PropertyKey[] }

const inputSchema = defineSchema<Input>({
  jsonSchema: {
    type: 'object',
    properties: {
      text: { type: 'string', maxLength: MAX_TEXT, description: `The text to measure, at most ${MAX_TEXT} characters.` },
      top: { type: 'integer', minimum: 1, maximum: 20, default: 5, description: 'How many of the most frequent words to list (1 to 20, default 5).' },
    },
    required: ['text'],
    additionalProperties: false,
  },
  parse (value) {
    const input = objectOf(value)
    const issues: Issue[] = unknownKeys(input, ['text', 'top'])
    // JSON Schema lengths count code points, not UTF-16 units.
    if (typeof input.text !== 'string') issues.push({ message: 'text must be a string', path: ['text'] })
    else if ([...input.text].length > MAX_TEXT) issues.push({ message: `text must be at most ${MAX_TEXT} characters`, path: ['text'] })
    const top = input.top === undefined ? 5 : input.top
    if (!Number.isInteger(top) || (top as number) < 1 || (top as number) > 20) issues.push({ message: 'top must be a whole number from 1 to 20', path: ['top'] })
    throwIssues(issues)
    return { text: input.text as string, top: top as number }
  },
})

const outputSchema = defineSchema<Output>({
  jsonSchema: {
    type: 'object',
    properties: {
      characters: { type: 'integer', minimum: 0, description: 'Characters (code points).' },
      words: { type: 'integer', minimum: 0, description: 'Words: runs of letters, digits and apostrophes.' },
      lines: { type: 'integer', minimum: 0, description: 'Lines; an empty text has none.' },
      topWords: {
        type: 'array',
        description: 'The most frequent words, lowercased, most frequent first (ties alphabetical).',
        items: { type: 'object', properties: { word: { type: 'string' }, count: { type: 'integer', minimum: 1 } }, required: ['word', 'count'], additionalProperties: false },
      },
    },
    required: ['characters', 'words', 'lines', 'topWords'],
    additionalProperties: false,
  },
  parse (value) {
    const output = objectOf(value)
    const issues: Issue[] = unknownKeys(output, ['characters', 'words', 'lines', 'topWords'])
    for (const key of ['characters', 'words', 'lines'] as const) {
      if (!Number.isInteger(output[key]) || (output[key] as number) < 0) issues.push({ message: `${key} must be a whole number >= 0`, path: [key] })
    }
    const topWords = Array.isArray(output.topWords) ? output.topWords as unknown[] : []
    if (!Array.isArray(output.topWords)) issues.push({ message: 'topWords must be an array', path: ['topWords'] })
    topWords.forEach((entry, i) => {
      const { word, count } = (entry ?? {}) as Partial<WordCount>
      if (typeof word !== 'string' || !Number.isInteger(count) || count! < 1) issues.push({ message: 'each entry is { word, count >= 1 }', path: ['topWords', i] })
    })
    throwIssues(issues)
    return output as unknown as Output
  },
})

function objectOf (value: unknown): Record<string, unknown> {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) throw new Error('expected a JSON object')
  return value as Record<string, unknown>
}

function unknownKeys (value: Record<string, unknown>, known: readonly string[]): Issue[] {
  return Object.keys(value).filter(key => !known.includes(key)).map(key => ({ message: `unknown argument "${key}"`, path: [key] }))
}

function throwIssues (issues: readonly Issue[]): void {
  if (issues.length > 0) throw Object.assign(new Error(issues.map(i => i.message).join('; ')), { issues })
}

/** Counts and the most frequent words; pure, so read-only and concurrency-safe. */
export function textStats ({ text, top }: Input): Output {
  const words = text.toLowerCase().match(/[\p{L}\p{N}']+/gu) ?? []
  const counts = new Map<string, number>()
  for (const word of words) counts.set(word, (counts.get(word) ?? 0) + 1)
  const topWords = [...counts].map(([word, count]) => ({ word, count }))
    .sort((a, b) => b.count - a.count || (a.word < b.word ? -1 : a.word > b.word ? 1 : 0))
    .slice(0, top)
  return { characters: [...text].length, words: words.length, lines: text === '' ? 0 : text.split(/\r\n|\r|\n/).length, topWords }
}

export default defineTool({
  id: 'text_stats',
  kind: 'read',
  description: 'Count the characters, words and lines of a text and list its most frequent words. Call it to measure or summarise the shape of a text; it does not read files or URLs.',
  shortDescription: 'Character, word and line counts and top words of a text (text; top: 1-20).',
  inputSchema,
  outputSchema,
  isReadOnly: true,
  isConcurrencySafe: true,
  timeoutMs: 2_000,
  authorize () {},
  execute: input => textStats(input),
})
