import { describe, expect, it } from 'vitest'
import { GatewayError } from '../../../src/core/errors.js'
import { queryOf } from '../../../src/services/search/query.js'
import { toolSearchOf } from '../../../src/services/search/tool-search.js'
import { namedTools } from '../../../bench/generated-tools.js'

function refusal (raw: unknown): GatewayError {
  try {
    queryOf(raw)
  } catch (error) {
    if (error instanceof GatewayError) return error
    throw error
  }
  throw new Error(`accepted: ${String(raw)}`)
}

describe('a search query', () => {
  it('is the trimmed text of a few words', () => {
    expect(queryOf('  send an invoice\n')).toBe('send an invoice')
    expect(queryOf('Überweisung tätigen 💸')).toBe('Überweisung tätigen 💸')
  })

  it.each([
    ['not a string', 42, 'invalid_type'],
    ['empty', '   ', 'too_small'],
    ['without words', '?!? ...', 'too_small'],
    ['over 256 characters', 'a'.repeat(257), 'too_big'],
    ['over 32 words', Array.from({ length: 33 }, (_, i) => `w${i}`).join(' '), 'too_big'],
    ['with a control character', 'send\u0000invoice', 'invalid_string'],
    ['with a lone surrogate', 'send \ud800 invoice', 'invalid_string'],
  ])('is refused %s: a 400 naming the query', (_, raw, code) => {
    const error = refusal(raw)
    expect(error.code).toBe('TOOLGATE_INVALID_INPUT')
    expect(error.status).toBe(400)
    expect(error.extensions.errors).toEqual([{ pointer: '/query', message: error.message, code }])
  })

  it('stays fast when hostile: long misspelt words, regex text, many short prefixes, odd Unicode', () => {
    const search = toolSearchOf(namedTools(5_000), 120_000)
    const everyone = (): boolean => true
    search.search('warm up', { limit: 5, visible: everyone })
    const hostile = [
      Array.from({ length: 32 }, (_, i) => `invo${String(i).padStart(2, '0')}e`).join(' '),
      '.*(a+)+$ [^x]{1,99} \\d+ (?=y) '.repeat(2).trim(),
      Array.from({ length: 16 }, (_, i) => 'abcdefghijklmnop'[i]! + 'xx').join(' '),
      'invoice '.repeat(32).trim(),
      'Ωμέγα 数据 ﷽ 🧪🧪🧪 e\u0301e\u0301 ᚠᛇᚻ',
      'x'.repeat(256),
    ]
    for (const raw of hostile) {
      const started = performance.now()
      search.search(queryOf(raw), { limit: 10, visible: everyone })
      // Generous for a shared CI machine; the bench reports the real figure (well under this).
      expect(performance.now() - started, raw).toBeLessThan(250)
    }
  })
})
