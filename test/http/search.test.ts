import { describe, expect, it } from 'vitest'
import { loadToolsFromDir } from '../../src/services/loading/loader.js'
import { auth, KEYS, testApp } from './helpers.js'
import { expectProblem } from './problem-shape.js'

/*
 * `GET /tools?q=`: the search discovery mode runs over MCP, on the REST listing and its
 * exports; only what the caller may call is found, and a bad query is a 400 before any search.
 */

async function shipped (rules: Parameters<typeof testApp>[0] = {}): ReturnType<typeof testApp> {
  return await testApp(rules, await loadToolsFromDir('tools'))
}

describe('GET /tools?q=', () => {
  it('ranks the tools the words describe, best first, within limit; the exports take it too', async () => {
    const app = await shipped()
    const found = await app.inject({ method: 'GET', url: '/tools?q=current%20time%20in%20a%20time%20zone&limit=2', headers: auth(KEYS.admin) })
    const ids = found.json<{ tools: Array<{ id: string }> }>().tools.map(tool => tool.id)
    expect(ids[0]).toBe('time_now')
    expect(ids.length).toBeLessThanOrEqual(2)
    const openai = await app.inject({ method: 'GET', url: '/tools?q=current%20time&format=openai&limit=1', headers: auth(KEYS.admin) })
    expect(openai.json<{ tools: Array<{ function: { name: string } }> }>().tools.map(tool => tool.function.name)).toEqual(['time_now'])
    // The same query, the same answer.
    expect((await app.inject({ method: 'GET', url: '/tools?q=current%20time%20in%20a%20time%20zone&limit=2', headers: auth(KEYS.admin) })).body).toBe(found.body)
  })

  it('never finds a tool the caller may not call', async () => {
    const app = await shipped({ rules: [{ principal: 'caller', allow: ['notes_*'], deny: [] }] })
    const found = await app.inject({ method: 'GET', url: '/tools?q=current%20time%20zone', headers: auth(KEYS.caller) })
    expect(found.json<{ tools: Array<{ id: string }> }>().tools.every(tool => tool.id.startsWith('notes_'))).toBe(true)
  })

  it('answers an empty, huge or hostile query with a 400 naming /query/q', async () => {
    const app = await shipped()
    for (const q of ['', '%20%20', 'a'.repeat(300), encodeURIComponent('time\u0000now'), encodeURIComponent(Array.from({ length: 40 }, (_, i) => `w${i}`).join(' '))]) {
      const res = await app.inject({ method: 'GET', url: `/tools?q=${q}`, headers: auth(KEYS.admin) })
      expectProblem(res, 400, 'TOOLGATE_INVALID_INPUT')
      expect(res.json<{ errors: Array<{ pointer: string }> }>().errors[0]!.pointer).toBe('/query/q')
    }
    expectProblem(await app.inject({ method: 'GET', url: '/tools?q=time&limit=500', headers: auth(KEYS.admin) }), 400, 'TOOLGATE_INVALID_INPUT')
  })
})
