import { describe, expect, it } from 'vitest'
import { z } from 'zod'
import { defineTool } from '../../../src/index.js'
import { ownNameOf, type NamedTool } from '../../../src/core/bundles/named-tool.js'
import { toolSearchOf } from '../../../src/services/search/tool-search.js'
import { namedTools } from '../../../bench/generated-tools.js'

const TIMEOUT = 120_000
const everyone = (): boolean => true

function tool (id: string, description: string, options: { effects?: ('external' | 'financial')[], input?: z.ZodObject } = {}): NamedTool {
  return ownNameOf(defineTool({
    id, kind: 'read', description, isReadOnly: true, isConcurrencySafe: true, authorize () {}, effects: options.effects ?? [],
    inputSchema: options.input ?? z.object({}), outputSchema: z.object({}), execute: () => ({}),
  }))
}

const entries = [
  tool('get_weather', 'Current conditions for a place.', { input: z.object({ city: z.string().describe('City name') }) }),
  tool('pay_invoice', 'Settle an open bill.', { effects: ['financial', 'external'], input: z.object({ invoiceId: z.string() }) }),
  // An endpoint may name a tool otherwise (a bundle's alias), in camelCase too.
  { ...tool('agenda', 'What is on the agenda between two dates.'), name: 'listCalendarEvents' },
  tool('read_file', 'The text of a file on disk.', { input: z.object({ path: z.string() }) }),
]

function names (query: string, limit = 5, visible: (named: NamedTool) => boolean = everyone): string[] {
  return toolSearchOf(entries, TIMEOUT).search(query, { limit, visible }).map(hit => hit.named.name)
}

describe('tool search', () => {
  it('finds a tool by the words of its snake_case name', () => {
    expect(names('weather')[0]).toBe('get_weather')
  })

  it('finds a tool by the words of its camelCase name', () => {
    expect(names('calendar events')[0]).toBe('listCalendarEvents')
  })

  it('finds a tool by its description, its effects and its parameter names', () => {
    expect(names('settle bill')[0]).toBe('pay_invoice')
    expect(names('financial')[0]).toBe('pay_invoice')
    expect(names('path')[0]).toBe('read_file')
    expect(names('invoice id')[0]).toBe('pay_invoice')
    expect(names('city')[0]).toBe('get_weather')
  })

  it('finds a word by its beginning and a misspelt word of five letters or more', () => {
    expect(names('calend')[0]).toBe('listCalendarEvents')
    expect(names('wheather')[0]).toBe('get_weather')
  })

  it('finds nothing for a query of stop words only', () => {
    expect(names('the of and')).toEqual([])
  })

  it('never returns a tool the caller may not see, and still fills the limit with visible ones', () => {
    const many = namedTools(200)
    const visible = (named: NamedTool): boolean => !named.name.startsWith('get_invoice')
    const hits = toolSearchOf(many, TIMEOUT).search('get invoice', { limit: 10, visible })
    expect(hits).toHaveLength(10)
    expect(hits.every(hit => visible(hit.named))).toBe(true)
  })

  it('builds one index per entries array', () => {
    expect(toolSearchOf(entries, TIMEOUT)).toBe(toolSearchOf(entries, TIMEOUT))
    expect(toolSearchOf([...entries], TIMEOUT)).not.toBe(toolSearchOf(entries, TIMEOUT))
  })

  it('searches an alias under the name and description its endpoint gives it', () => {
    const alias: NamedTool = { name: 'forecast', description: 'Tomorrow\'s sky.', tool: entries[0]!.tool }
    const hits = toolSearchOf([alias], TIMEOUT).search('sky', { limit: 5, visible: everyone })
    expect(hits.map(hit => hit.named)).toEqual([alias])
  })
})
