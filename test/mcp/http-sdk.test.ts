import { describe, expect, it } from 'vitest'
import { CallToolResultSchema } from '@modelcontextprotocol/sdk/types.js'
import { KEYS } from '../http/helpers.js'
import { aborted, listeningGateway, sdkClient, started } from './helpers.js'

const DECLARATION = 'dev.toolgate/declaration'
const PROBLEM = 'dev.toolgate/problem'

describe('POST /mcp with the official SDK client (Streamable HTTP)', () => {
  it('initializes with the 2025-11-25 revision and lists exactly the tools this caller may call, in declaration order', async () => {
    const { url } = await listeningGateway()
    const client = await sdkClient(url)
    expect(client.getServerVersion()?.name).toBe('toolgate')
    const { tools } = await client.listTools()
    const names = tools.map(tool => tool.name)
    expect(names).not.toContain('admin_only') // inactive for this principal
    expect(names.slice(0, 3)).toEqual(['echo', 'slow_write', 'hang'])
    const admin = await sdkClient(url, KEYS.admin)
    expect((await admin.listTools()).tools.map(tool => tool.name)).toContain('admin_only')
    await client.close()
    await admin.close()
  })

  it('hides tools the permission rules refuse', async () => {
    const { url } = await listeningGateway({ rules: [{ principal: 'caller', allow: ['*'], deny: ['pay_*'] }] })
    const client = await sdkClient(url)
    const names = (await client.listTools()).tools.map(tool => tool.name)
    expect(names).toContain('echo')
    expect(names).not.toContain('pay_out')
    await client.close()
  })

  it('derives the annotations from the declaration and carries the whole declaration under one _meta key', async () => {
    const { url } = await listeningGateway()
    const client = await sdkClient(url)
    const { tools } = await client.listTools()
    const byName = new Map(tools.map(tool => [tool.name, tool]))
    expect(byName.get('echo')!.annotations).toMatchObject({ readOnlyHint: true, idempotentHint: true, openWorldHint: false })
    expect(byName.get('slow_write')!.annotations).toMatchObject({ readOnlyHint: false, destructiveHint: true, openWorldHint: false })
    expect(byName.get('slow_write')!.annotations).not.toHaveProperty('idempotentHint')
    expect(byName.get('pay_out')!.annotations).toMatchObject({ readOnlyHint: false, destructiveHint: false, openWorldHint: true })
    const declaration = byName.get('pay_out')!._meta![DECLARATION] as Record<string, unknown>
    expect(declaration).toMatchObject({ id: 'pay_out', kind: 'network', effects: ['external', 'financial'], flags: { readOnly: false } })
    expect(byName.get('echo')!.inputSchema).toMatchObject({ type: 'object', required: ['text'] })
    expect(byName.get('echo')!.outputSchema).toMatchObject({ type: 'object' })
    // Arguments are an object: a tool whose input is a bare string is left out (REST serves it).
    expect(byName.has('shout')).toBe(false)
    // A string output has no object schema: no outputSchema, the text block carries it.
    expect(byName.get('say')!.outputSchema).toBeUndefined()
    await client.close()
  })

  it('calls a tool: structuredContent is the parsed output, plus a text block of the same JSON', async () => {
    const { url } = await listeningGateway()
    const client = await sdkClient(url)
    const result = await client.callTool({ name: 'echo', arguments: { text: 'hi' } })
    expect(result.isError).toBe(false)
    expect(result.structuredContent).toEqual({ text: 'hi', length: 2 })
    expect(JSON.parse((result.content as Array<{ text: string }>)[0]!.text)).toEqual({ text: 'hi', length: 2 })
    const say = await client.callTool({ name: 'say', arguments: {} })
    expect((say.content as Array<{ text: string }>)[0]!.text).toBe('"hello"')
    await client.close()
  })

  it('answers a tool error as an isError result with the problem object REST sends', async () => {
    const { url, app } = await listeningGateway()
    const client = await sdkClient(url)
    const result = await client.callTool({ name: 'refuse', arguments: {} })
    expect(result.isError).toBe(true)
    const problem = result._meta![PROBLEM] as Record<string, unknown>
    const rest = await app.inject({ method: 'POST', url: '/tools/refuse', headers: { 'x-api-key': KEYS.caller }, payload: {} })
    const restProblem = rest.json()
    expect(problem).toMatchObject({ status: 409, code: 'ALREADY_DONE', detail: restProblem.detail, type: restProblem.type })
    expect(JSON.parse((result.content as Array<{ text: string }>)[0]!.text)).toEqual(problem)
    await client.close()
  })

  it('answers bad input as an isError result with every issue and its pointer', async () => {
    const { url } = await listeningGateway()
    const client = await sdkClient(url)
    const result = await client.callTool({ name: 'echo', arguments: { text: '', extra: 1 } })
    expect(result.isError).toBe(true)
    const problem = result._meta![PROBLEM] as { status: number, code: string, errors: Array<{ pointer: string }> }
    expect(problem.status).toBe(400)
    expect(problem.code).toBe('TOOLGATE_INVALID_INPUT')
    expect(problem.errors.map(e => e.pointer)).toEqual(expect.arrayContaining(['/text']))
    await client.close()
  })

  it('answers a timeout as an isError 504 result, whatever the tool does', async () => {
    const { url } = await listeningGateway()
    const client = await sdkClient(url)
    const result = await client.callTool({ name: 'hang', arguments: {} })
    expect(result.isError).toBe(true)
    expect(result._meta![PROBLEM]).toMatchObject({ status: 504, code: 'TOOLGATE_TIMEOUT' })
    await client.close()
  })

  it('answers an unknown or inactive tool with a JSON-RPC error, not a result', async () => {
    const { url } = await listeningGateway()
    const client = await sdkClient(url)
    await expect(client.callTool({ name: 'no_such_tool', arguments: {} })).rejects.toThrow(/unknown tool/)
    await expect(client.callTool({ name: 'admin_only', arguments: {} })).rejects.toThrow(/unknown tool/)
    await client.close()
  })

  it('cancels a call when the client cancels it (notifications/cancelled aborts the tool signal)', async () => {
    const { url } = await listeningGateway()
    const client = await sdkClient(url)
    const controller = new AbortController()
    const call = client.callTool({ name: 'wait_for_abort', arguments: { tag: 'sdk-cancel' } }, undefined, { signal: controller.signal })
    await expect.poll(() => started.includes('sdk-cancel'), { timeout: 5000 }).toBe(true) // cancel it once it runs
    controller.abort('changed my mind')
    await expect(call).rejects.toThrow()
    await expect.poll(() => aborted.includes('sdk-cancel'), { timeout: 3000 }).toBe(true)
    await client.close()
  })

  it('reaches idempotency, plan mode and dry run through namespaced _meta keys', async () => {
    const { url } = await listeningGateway()
    const client = await sdkClient(url, KEYS.admin)
    const key = { 'dev.toolgate/idempotencyKey': 'mcp-key-1' }
    const first = await client.callTool({ name: 'pay_out', arguments: { cents: 5 }, _meta: key })
    const again = await client.callTool({ name: 'pay_out', arguments: { cents: 5 }, _meta: key })
    expect(first.structuredContent).toEqual({ sent: 5 })
    expect(again._meta).toMatchObject({ 'dev.toolgate/replayed': true })
    const planned = await client.callTool({ name: 'pay_out', arguments: { cents: 5 }, _meta: { 'dev.toolgate/mode': 'plan' } })
    expect(planned.isError).toBe(true)
    expect(planned._meta![PROBLEM]).toMatchObject({ status: 403 })
    // A proposal is not an output: read it with the plain result schema (no outputSchema check).
    const dry = await client.request({ method: 'tools/call', params: { name: 'escalatable', arguments: {}, _meta: { 'dev.toolgate/dryRun': true } } }, CallToolResultSchema)
    expect(dry._meta).toMatchObject({ 'dev.toolgate/proposal': { wouldEscalate: true } })
    await client.close()
  })
})
