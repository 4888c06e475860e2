import { describe, expect, it } from 'vitest'
import textStatsTool from '../../tools/text-stats.js'
import { jsonSchemaOf } from '../../src/services/tool-listing.js'
import { expectFailure, harness } from './app.js'

/* The shipped example of a tool written without zod (defineSchema adapters). */

const tools = harness([textStatsTool])

describe('text_stats', () => {
  it('counts characters (code points), words and lines and lists the top words', async () => {
    const { value } = await tools.call('text_stats', { text: 'The cat saw the dog.\nThe END 🐈', top: 2 })
    expect(value).toEqual({ characters: 30, words: 7, lines: 2, topWords: [{ word: 'the', count: 3 }, { word: 'cat', count: 1 }] })
  })

  it('lists five words by default and has no lines for an empty text', async () => {
    expect((await tools.call('text_stats', { text: '' })).value).toEqual({ characters: 0, words: 0, lines: 0, topWords: [] })
    const { value } = await tools.call<{ topWords: unknown[] }>('text_stats', { text: 'a b c d e f g' })
    expect(value.topWords).toHaveLength(5)
  })

  it('refuses bad input with one issue per field, each at its JSON pointer', async () => {
    const error = await expectFailure(tools.call('text_stats', { text: 7, top: 0, colour: 'red' }), 400, 'TOOLGATE_INVALID_INPUT')
    expect((error.extensions.errors as Array<{ pointer: string }>).map(e => e.pointer).sort()).toEqual(['/colour', '/text', '/top'])
  })

  it('counts the length limit in code points, as its JSON Schema does', async () => {
    await expect(tools.call('text_stats', { text: '🐈'.repeat(10_000) })).resolves.toBeDefined()
    await expectFailure(tools.call('text_stats', { text: 'a'.repeat(10_001) }), 400, 'TOOLGATE_INVALID_INPUT')
  })

  it('publishes the JSON Schema written in its adapter', () => {
    expect(jsonSchemaOf(textStatsTool.inputSchema, 'input')).toMatchObject({ required: ['text'], additionalProperties: false, properties: { top: { type: 'integer', minimum: 1, maximum: 20 } } })
  })
})
