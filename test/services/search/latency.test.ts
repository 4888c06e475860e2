import { describe, expect, it } from 'vitest'
import { toolSearchOf } from '../../../src/services/search/tool-search.js'
import { namedTools } from '../../../bench/generated-tools.js'

describe('tool search latency', () => {
  it('answers in milliseconds over 5,000 tools', () => {
    const search = toolSearchOf(namedTools(5_000), 120_000)
    const everyone = (): boolean => true
    const queries = ['send a message to a customer', 'delete an old ticket', 'export the monthly report', 'sync calendar', 'archive file 12', 'list orders']
    search.search('warm up the index', { limit: 5, visible: everyone })
    const times: number[] = []
    for (let round = 0; round < 5; round++) {
      for (const query of queries) {
        const started = performance.now()
        search.search(query, { limit: 5, visible: everyone })
        times.push(performance.now() - started)
      }
    }
    times.sort((a, b) => a - b)
    // Generous for a shared CI machine: `npm run bench:discovery` reports the real median and p99.
    expect(times[Math.floor(times.length / 2)]).toBeLessThan(50)
  })
})
