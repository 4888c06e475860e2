import fc from 'fast-check'
import type { FastifyInstance } from 'fastify'
import { describe, expect, it } from 'vitest'
import { z } from 'zod'
import { defineTool, ToolDefinitionError, type AnyTool } from '../../src/index.js'
import { ToolReplacementError } from '../../src/services/loading/catalog-updates.js'
import { SLOW } from '../slow.js'
import { auth, KEYS, testApp } from './helpers.js'

/** A tool that says which version of the catalog it belongs to, in its description and its output. */
function versioned (id: string, version: number, extra: Partial<Parameters<typeof defineTool>[0]> = {}): AnyTool {
  return defineTool({
    id, kind: 'read', description: `Tool ${id} of version ${version}.`,
    inputSchema: z.object({ text: z.string() }), outputSchema: z.object({ id: z.string(), version: z.number() }),
    isReadOnly: true, isConcurrencySafe: true, authorize () {}, execute: () => ({ id, version }),
    ...extra,
  } as Parameters<typeof defineTool>[0]) as AnyTool
}

const call = (app: FastifyInstance, id: string, input: unknown = { text: 'a' }) =>
  app.inject({ method: 'POST', url: `/tools/${id}`, headers: auth(KEYS.admin), payload: input as object })
const get = async (app: FastifyInstance, url: string): Promise<Record<string, unknown>> =>
  (await app.inject({ method: 'GET', url, headers: auth(KEYS.admin) })).json<Record<string, unknown>>()
const MCP_HEADERS = { 'content-type': 'application/json', accept: 'application/json, text/event-stream', 'mcp-protocol-version': '2025-11-25', ...auth(KEYS.admin) }
async function mcpToolNames (app: FastifyInstance): Promise<string[]> {
  const res = await app.inject({ method: 'POST', url: '/mcp', headers: MCP_HEADERS, payload: { jsonrpc: '2.0', id: 1, method: 'tools/list', params: {} } })
  return (res.json<{ result: { tools: Array<{ name: string }> } }>()).result.tools.map(tool => tool.name)
}
const paths = async (app: FastifyInstance): Promise<string[]> => Object.keys((await get(app, '/openapi.json')).paths as object).filter(path => path.startsWith('/tools/') && path !== '/tools/{id}')

describe('app.replaceTools: every face follows the catalog serving now', () => {
  it('an added tool answers at once on REST, in the listing, the document, the OpenAI export and MCP', async () => {
    const app = await testApp({}, [versioned('first', 1)])
    const change = await app.replaceTools([versioned('first', 1), versioned('second', 2)])
    expect(change).toMatchObject({ version: 2, added: ['second'], removed: [], tools: 2 })
    expect((await call(app, 'second')).json()).toEqual({ id: 'second', version: 2 })
    expect(((await get(app, '/tools')).tools as Array<{ id: string }>).map(tool => tool.id)).toEqual(['first', 'second'])
    expect((await get(app, '/tools/second')).description).toBe('Tool second of version 2.')
    expect(await paths(app)).toEqual(['/tools/first', '/tools/second'])
    const openai = await get(app, '/tools?format=openai')
    expect((openai.tools as Array<{ function: { name: string } }>).map(tool => tool.function.name)).toEqual(['first', 'second'])
    expect(await mcpToolNames(app)).toEqual(['first', 'second'])
  })

  it('a removed tool is 404 like an unknown one, and leaves every listing', async () => {
    const app = await testApp({}, [versioned('first', 1), versioned('second', 1)])
    await app.replaceTools([versioned('first', 2)])
    const removed = await call(app, 'second')
    expect(removed.statusCode).toBe(404)
    expect(removed.json()).toMatchObject({ code: 'TOOLGATE_NOT_FOUND', detail: 'no tool "second"' })
    expect((await app.inject({ method: 'GET', url: '/tools/second', headers: auth(KEYS.admin) })).statusCode).toBe(404)
    expect(await paths(app)).toEqual(['/tools/first'])
    expect(await mcpToolNames(app)).toEqual(['first'])
  })

  it('a changed declaration: its new schema is enforced and its new text documented on the next request', async () => {
    const app = await testApp({}, [versioned('first', 1)])
    expect((await call(app, 'first', { text: 'longer' })).statusCode).toBe(200)
    await app.replaceTools([versioned('first', 2, { inputSchema: z.object({ text: z.string().max(3) }) })])
    expect((await call(app, 'first', { text: 'longer' })).statusCode).toBe(400)
    const operation = ((await get(app, '/openapi.json')).paths as Record<string, { post: { description: string } }>)['/tools/first']!.post
    expect(operation.description).toContain('Tool first of version 2.')
  })

  it('a refused replacement rejects with why, and the tools serving stay', async () => {
    const app = await testApp({}, [versioned('first', 1)])
    const refused = app.replaceTools([versioned('first', 2), versioned('first', 3)])
    await expect(refused).rejects.toBeInstanceOf(ToolReplacementError)
    const error = await refused.then(() => undefined, (e: unknown) => e as ToolReplacementError)
    if (error === undefined) throw new Error('the replacement was accepted')
    expect(error.cause).toBeInstanceOf(ToolDefinitionError)
    expect(error.message).toMatch(/still serving version 1, 1 tools\).*"first".*declared twice/)
    expect((await call(app, 'first')).json()).toEqual({ id: 'first', version: 1 })
    const metrics = (await app.inject({ method: 'GET', url: '/metrics' })).body
    expect(metrics).toContain('toolgate_catalog_replacements_total{outcome="failed"} 1')
    expect(metrics).toContain('toolgate_catalog_tools 1')
  })

  it('a plain declaration with a bad field is refused naming the field', async () => {
    const app = await testApp({}, [versioned('first', 1)])
    const declaration = { id: 'other', kind: 'read', description: '', inputSchema: z.object({}), outputSchema: z.null(), isReadOnly: true, isConcurrencySafe: true, authorize () {}, execute: () => null }
    await expect(app.replaceTools([declaration])).rejects.toThrow(/tool "other": field "description"/)
    expect(app.catalog.ids()).toEqual(['first'])
  })

  it('a replacement that lands while the app is getting ready is documented too', async () => {
    const app = await testApp({}, Array.from({ length: 60 }, (_, i) => versioned(`tool_${i}`, 1)))
    const ready = app.ready()
    await new Promise(resolve => setTimeout(resolve, 5))
    const replaced = app.replaceTools([versioned('late', 2)])
    await ready
    await replaced
    expect(await paths(app)).toEqual(['/tools/late'])
  })

  it('a set installed past replaceTools (app.catalog.replace) answers its document with 503 until it is generated, then serves it', async () => {
    const app = await testApp({}, [versioned('first', 1)])
    await app.ready()
    app.catalog.replace([versioned('direct', 2)])
    const early = await app.inject({ method: 'GET', url: '/openapi.json', headers: auth(KEYS.admin) })
    expect([200, 503]).toContain(early.statusCode)
    if (early.statusCode === 503) expect(early.headers['retry-after']).toBe('1')
    for (let i = 0; i < 100 && (await app.inject({ method: 'GET', url: '/openapi.json', headers: auth(KEYS.admin) })).statusCode !== 200; i++) await new Promise(resolve => setTimeout(resolve, 20))
    expect(await paths(app)).toEqual(['/tools/direct'])
  })

  it('reloadTools without a tools folder says so and changes nothing', async () => {
    const app = await testApp({}, [versioned('first', 1)])
    await expect(app.reloadTools()).rejects.toThrow(/not a tools folder/)
  })

  it('metrics: a new tool has its series at once; a removed one keeps its counts', async () => {
    const app = await testApp({}, [versioned('first', 1)])
    await call(app, 'first')
    await app.replaceTools([versioned('second', 2)])
    const metrics = (await app.inject({ method: 'GET', url: '/metrics' })).body
    expect(metrics).toContain('toolgate_tool_calls_total{tool="second",kind="read",effects="none",outcome="ok"} 0')
    expect(metrics).toContain('toolgate_tool_calls_total{tool="first",kind="read",effects="none",outcome="ok"} 1')
    await call(app, 'unknown_tool')
    expect((await app.inject({ method: 'GET', url: '/metrics' })).body).not.toContain('unknown_tool')
  })

  it('a pending approval survives a replacement and runs once on the declaration serving when it is redeemed', async () => {
    const guarded = (version: number): AnyTool => versioned('guarded', version, { isReadOnly: false, isConcurrencySafe: false, requiresApproval: true })
    const app = await testApp({ approvalAllowSelf: true, apiKeys: [{ principal: 'admin', sha256: (await import('../../src/services/auth/api-keys.js')).hashApiKey(KEYS.admin), scopes: ['tools:read', 'tools:call', 'tools:approve'] }] }, [guarded(1)])
    const pending = await call(app, 'guarded')
    expect(pending.statusCode).toBe(202)
    const { id } = pending.json<{ id: string }>()
    await app.replaceTools([guarded(2)])
    expect((await app.inject({ method: 'POST', url: `/approvals/${id}/approve`, headers: { ...auth(KEYS.admin), 'content-type': 'application/json' }, payload: {} })).statusCode).toBe(200)
    const approved = await app.inject({ method: 'POST', url: '/tools/guarded', headers: { ...auth(KEYS.admin), 'approval-id': id }, payload: { text: 'a' } })
    expect(approved.json()).toEqual({ id: 'guarded', version: 2 })
  })
})

describe('a large replacement', () => {
  it('replacing 1000 tools refuses no call made meanwhile, and documents all 1000 after', async () => {
    const many = (version: number): AnyTool[] => Array.from({ length: 1000 }, (_, i) => versioned(`tool_${i}`, version))
    const app = await testApp({}, many(1))
    await app.ready()
    let done = false
    const statuses: number[] = []
    const caller = async (): Promise<void> => {
      while (!done) statuses.push((await call(app, 'tool_7')).statusCode)
    }
    const callers = [caller(), caller(), caller()]
    const change = await app.replaceTools(many(2))
    done = true
    await Promise.all(callers)
    expect(change.changed).toHaveLength(1000)
    expect(statuses.length).toBeGreaterThan(0)
    expect(statuses.filter(status => status !== 200)).toEqual([])
    expect(await paths(app)).toHaveLength(1000)
    expect((await call(app, 'tool_999')).json()).toEqual({ id: 'tool_999', version: 2 })
  }, SLOW.CPU_MS)
})

describe('concurrent requests during repeated replacements', () => {
  it('never see a mixed catalog: a listing is one version, a call answers from a version serving during it', async () => {
    const ids = ['t0', 't1', 't2', 't3']
    await fc.assert(fc.asyncProperty(
      fc.array(fc.oneof(
        fc.record({ type: fc.constant('replace' as const), keep: fc.subarray(ids, { minLength: 1 }) }),
        fc.record({ type: fc.constant('list' as const) }),
        fc.record({ type: fc.constant('call' as const), id: fc.constantFrom(...ids) }),
      ), { minLength: 5, maxLength: 30 }),
      async operations => {
        const app = await testApp({}, ids.map(id => versioned(id, 1)))
        // Which versions held which ids: a call may answer from any version installed while it ran.
        const held = new Map<number, Set<string>>([[1, new Set(ids)]])
        let version = 1
        const checks = operations.map(async (operation, index) => {
          await new Promise(resolve => setTimeout(resolve, index % 3))
          if (operation.type === 'replace') {
            const next = ++version
            held.set(next, new Set(operation.keep))
            await app.replaceTools(operation.keep.map(id => versioned(id, next)))
            return
          }
          const from = app.catalog.current.version
          if (operation.type === 'list') {
            const listed = (await get(app, '/tools')).tools as Array<{ description: string }>
            const versions = new Set(listed.map(tool => /version (\d+)/.exec(tool.description)![1]))
            expect(versions.size).toBe(1)
            return
          }
          const res = await call(app, operation.id)
          const to = app.catalog.current.version
          if (res.statusCode === 404) {
            expect([...held].some(([v, set]) => v >= from && v <= to && !set.has(operation.id))).toBe(true)
            return
          }
          expect(res.statusCode).toBe(200)
          const answered = res.json<{ version: number }>().version
          expect(answered).toBeGreaterThanOrEqual(from)
          expect(answered).toBeLessThanOrEqual(to)
          expect(held.get(answered)!.has(operation.id)).toBe(true)
        })
        await Promise.all(checks)
        await app.close()
      },
    ), { numRuns: 25 })
  }, SLOW.CPU_MS)
})
