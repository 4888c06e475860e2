import { describe, expect, it } from 'vitest'
import { z } from 'zod'
import { defineTool, ToolDefinitionError } from '../../src/index.js'
import { httpTools } from '../fixtures/http-tools.js'
import { auth, KEYS, testApp } from '../http/helpers.js'

let executed = 0
const RULES = [{ principal: 'caller', allow: ['*'], deny: ['check_*'] }, { principal: 'admin', allow: ['*'] }]
const intentTools = [
  ...httpTools,
  defineTool({
    id: 'book_table', kind: 'write', description: 'Book a table at a restaurant.', isReadOnly: false, isConcurrencySafe: false,
    effects: ['external', 'affects-others'], asIntent: { description: 'The user wants a restaurant table.' },
    inputSchema: z.object({ restaurant: z.string().min(1), people: z.number().int().min(1).max(12) }),
    outputSchema: z.object({ booked: z.boolean() }),
    authorize: ({ restaurant }) => { if (restaurant === 'Closed Inn') throw new Error('that restaurant does not take bookings from you') },
    resolve: ({ restaurant, people }) => ({ action: 'book', summary: `a table for ${people} at ${restaurant}` }),
    execute: () => { executed++; return { booked: true } },
  }),
  defineTool({
    id: 'check_weather', kind: 'read', description: 'Read the weather for a city.', isReadOnly: true, isConcurrencySafe: true,
    asIntent: true, authorize () {},
    inputSchema: z.object({ city: z.string() }), outputSchema: z.object({ sky: z.string() }),
    execute: () => { executed++; return { sky: 'clear' } },
  }),
]

async function resolve (body: unknown, key: string = KEYS.caller): Promise<{ status: number, json: any }> {
  const app = await testApp({ rules: RULES }, intentTools)
  const res = await app.inject({ method: 'POST', url: '/intents/resolve', headers: auth(key), payload: body as object })
  return { status: res.statusCode, json: res.json() }
}

describe('intents: GET /intents and POST /intents/resolve', () => {
  it('lists the asIntent tools this caller may call, with one structured-output schema of their cases', async () => {
    const app = await testApp({ rules: RULES }, intentTools)
    const mine = (await app.inject({ method: 'GET', url: '/intents', headers: auth(KEYS.caller) })).json()
    expect(mine.intents).toEqual([{ intent: 'book_table', description: 'The user wants a restaurant table.', effects: ['affects-others', 'external'], readOnly: false }])
    const admin = (await app.inject({ method: 'GET', url: '/intents', headers: auth(KEYS.admin) })).json()
    expect(admin.intents.map((i: { intent: string }) => i.intent)).toEqual(['book_table', 'check_weather'])
    const cases = admin.schema.anyOf as Array<{ properties: { intent: { const: string }, input: { required: string[] } }, required: string[] }>
    expect(cases.map(c => c.properties.intent.const)).toEqual(['book_table', 'check_weather'])
    expect(cases[0]!.properties.input.required).toEqual(['restaurant', 'people'])
    expect(cases[0]!.required).toEqual(['intent', 'input'])
  })

  it('resolves a valid, authorized intent to the tool\'s proposal and executes nothing', async () => {
    executed = 0
    const { status, json } = await resolve({ intent: 'book_table', input: { restaurant: 'Chez Nous', people: 2 } })
    expect(status).toBe(200)
    expect(json).toEqual({ intent: 'book_table', proposal: { action: 'book', summary: 'a table for 2 at Chez Nous' } })
    expect(executed).toBe(0)
  })

  it('validates (400 with pointers) and authorizes (403) before answering', async () => {
    const bad = await resolve({ intent: 'book_table', input: { restaurant: '', people: 40 } })
    expect(bad.status).toBe(400)
    expect(bad.json.errors.map((e: { pointer: string }) => e.pointer).sort()).toEqual(['/input/people', '/input/restaurant'])
    const denied = await resolve({ intent: 'book_table', input: { restaurant: 'Closed Inn', people: 2 } })
    expect(denied.status).toBe(403)
  })

  it('answers 404 for a tool that is not an intent and for an unknown name; 403 where the rules refuse, as REST does', async () => {
    expect((await resolve({ intent: 'echo', input: { text: 'x' } })).status).toBe(404)
    expect((await resolve({ intent: 'nope', input: {} })).status).toBe(404)
    expect((await resolve({ intent: 'check_weather', input: { city: 'Oslo' } })).status).toBe(403)
    expect((await resolve({ intent: 'check_weather', input: { city: 'Oslo' } }, KEYS.admin)).json).toEqual({ intent: 'check_weather', proposal: { city: 'Oslo' } })
  })

  it('defineTool refuses a malformed asIntent, naming the field', () => {
    const base = { id: 'x', kind: 'read', description: 'X.', isReadOnly: true, isConcurrencySafe: true, authorize () {}, execute: () => null, inputSchema: z.object({}), outputSchema: z.null() }
    expect(() => defineTool({ ...base, asIntent: 'yes' as never })).toThrow(ToolDefinitionError)
    expect(() => defineTool({ ...base, asIntent: { name: 'other' } as never })).toThrow(/asIntent/)
    expect(defineTool({ ...base, asIntent: true }).asIntent).toEqual({})
  })
})
