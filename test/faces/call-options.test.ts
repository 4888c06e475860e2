/**
 * Every option of a call, on every face, is parsed by one definition: present and malformed
 * is a refusal that names the field, and the tool does not run. Walks each option (dry run,
 * plan mode, escalation, idempotency key, approval id, wait) over REST, the intents route, MCP
 * over HTTP (its `_meta` and the REST spellings), MCP over stdio, and in-process calls.
 */
import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process'
import { createInterface } from 'node:readline'
import { setTimeout as sleep } from 'node:timers/promises'
import { fileURLToPath } from 'node:url'
import type { FastifyInstance, LightMyRequestResponse } from 'fastify'
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest'
import { defineToolCatalog, GatewayError, type AnyTool } from '../../src/index.js'
import type { CallOptionName } from '../../src/core/call-options.js'
import optionTools, { runs } from '../fixtures/option-tools/tools.js'
import { auth, KEYS, testApp } from '../http/helpers.js'
import { SLOW } from '../slow.js'

const tools = optionTools as unknown as AnyTool[]
const INPUT = { by: 1 }

/** One malformed value of each option, in each form a face carries it. */
const MALFORMED: Record<CallOptionName, { readonly text: string, readonly json: unknown, readonly value: unknown }> = {
  dryRun: { text: '1', json: 'true', value: 'true' },
  mode: { text: 'PLAN', json: 'PLAN', value: 'PLAN' },
  escalate: { text: 'yes', json: 1, value: 'true' },
  idempotencyKey: { text: 'has space', json: 5, value: 5 },
  approvalId: { text: 'x'.repeat(200), json: 7, value: '' },
  waitForApprovalMs: { text: 'abc', json: '10', value: -1 },
}
const OPTIONS = Object.keys(MALFORMED) as CallOptionName[]

/** Where HTTP carries each option (REST, intents, and `POST /mcp` too), and the pointer a refusal names. */
function httpPlace (option: CallOptionName, text: string): { query: Record<string, string>, headers: Record<string, string>, pointer: string } {
  switch (option) {
    case 'idempotencyKey': return { query: {}, headers: { 'idempotency-key': text }, pointer: '/headers/idempotency-key' }
    case 'approvalId': return { query: {}, headers: { 'approval-id': text }, pointer: '/headers/approval-id' }
    case 'waitForApprovalMs': return { query: {}, headers: { prefer: `wait=${text}` }, pointer: '/headers/prefer' }
    default: return { query: { [option]: text }, headers: {}, pointer: `/query/${option}` }
  }
}

/** The `_meta` key of each option over MCP. */
const META_KEY: Record<CallOptionName, string> = {
  dryRun: 'dev.toolgate/dryRun', mode: 'dev.toolgate/mode', escalate: 'dev.toolgate/escalate',
  idempotencyKey: 'dev.toolgate/idempotencyKey', approvalId: 'dev.toolgate/approvalId', waitForApprovalMs: 'dev.toolgate/wait',
}
const metaPointer = (key: string): string => `/params/_meta/${key.replace('/', '~1')}`

function pointersOf (body: { errors?: Array<{ pointer: string }> } | undefined): string[] {
  return (body?.errors ?? []).map(issue => issue.pointer)
}

function rpc (params: Record<string, unknown>): Record<string, unknown> {
  return { jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'bump', arguments: INPUT, ...params } }
}

let app: FastifyInstance
// testApp closes its app after each test.
beforeEach(async () => {
  runs.count = 0
  app = await testApp({}, tools)
})

async function rest (query: Record<string, string>, headers: Record<string, string>): Promise<LightMyRequestResponse> {
  return await app.inject({ method: 'POST', url: '/tools/bump', query, headers: { ...auth(KEYS.admin), ...headers }, payload: INPUT })
}

async function intent (query: Record<string, string>, headers: Record<string, string>): Promise<LightMyRequestResponse> {
  return await app.inject({ method: 'POST', url: '/intents/resolve', query, headers: { ...auth(KEYS.admin), ...headers }, payload: { intent: 'bump', input: INPUT } })
}

async function mcpHttp (message: Record<string, unknown>, query: Record<string, string> = {}, headers: Record<string, string> = {}): Promise<{ error?: { code: number, data?: { errors?: Array<{ pointer: string }> } }, result?: Record<string, unknown> }> {
  const response = await app.inject({
    method: 'POST', url: '/mcp', query, payload: message,
    headers: { ...auth(KEYS.admin), accept: 'application/json, text/event-stream', 'mcp-protocol-version': '2025-11-25', ...headers },
  })
  return response.json()
}

describe('each call option, malformed, is refused on every face, naming the field; nothing runs', () => {
  const httpFaces: Record<string, typeof rest> = { 'over REST': rest, 'on the intents route': intent }
  it.each(OPTIONS.flatMap(option => Object.keys(httpFaces).map(face => [option, face] as const)))('%s %s', async (option, face) => {
    const place = httpPlace(option, MALFORMED[option].text)
    const response = await httpFaces[face]!(place.query, place.headers)
    expect(response.statusCode, response.body).toBe(400)
    expect(pointersOf(response.json())).toEqual([place.pointer])
    expect(runs.count).toBe(0)
  })

  it.each(OPTIONS)('%s in an MCP request\'s _meta over HTTP', async option => {
    const key = META_KEY[option]
    const answer = await mcpHttp(rpc({ _meta: { [key]: MALFORMED[option].json } }))
    expect(answer.error?.code, JSON.stringify(answer)).toBe(-32602)
    expect(pointersOf(answer.error?.data)).toEqual([metaPointer(key)])
    expect(runs.count).toBe(0)
  })

  it.each(OPTIONS)('%s in its REST spelling on POST /mcp', async option => {
    const place = httpPlace(option, MALFORMED[option].text)
    const answer = await mcpHttp(rpc({}), place.query, place.headers)
    expect(answer.error?.code, JSON.stringify(answer)).toBe(-32602)
    expect(pointersOf(answer.error?.data)).toEqual([place.pointer])
    expect(runs.count).toBe(0)
  })

  it.each(OPTIONS)('%s in-process', async option => {
    const catalog = defineToolCatalog(tools)
    const call = option === 'mode'
      ? catalog.invokeWith({ app: undefined, mode: MALFORMED.mode.value as 'plan' }, { toolId: 'bump', input: INPUT })
      : catalog.invokeWith({ app: undefined }, { toolId: 'bump', input: INPUT, [option]: MALFORMED[option].value })
    const refusal = await call.then(() => undefined, (error: unknown) => error)
    expect(refusal).toBeInstanceOf(GatewayError)
    expect((refusal as GatewayError).status).toBe(400)
    expect(pointersOf((refusal as GatewayError).extensions as { errors?: Array<{ pointer: string }> })).toEqual([`/${option}`])
    expect(runs.count).toBe(0)
  })
})

describe('the controls: the same faces run a well-formed call, and a well-formed dry run runs nothing', () => {
  it('REST', async () => {
    expect((await rest({ dryRun: 'true' }, {})).statusCode).toBe(200)
    expect(runs.count).toBe(0)
    expect((await rest({ dryRun: 'false', mode: 'normal' }, { 'idempotency-key': 'k-1', prefer: 'wait=0' })).statusCode).toBe(200)
    expect(runs.count).toBe(1)
  })

  it('MCP over HTTP', async () => {
    expect((await mcpHttp(rpc({ _meta: { 'dev.toolgate/dryRun': true } }))).result?.isError).toBeUndefined()
    expect(runs.count).toBe(0)
    expect((await mcpHttp(rpc({ _meta: { 'dev.toolgate/dryRun': false, 'dev.toolgate/wait': 0 } }))).result?.isError).toBe(false)
    expect(runs.count).toBe(1)
  })

  it('in-process', async () => {
    const catalog = defineToolCatalog(tools)
    await catalog.invokeWith({ app: undefined, mode: 'normal' }, { toolId: 'bump', input: INPUT, dryRun: true })
    expect(runs.count).toBe(0)
    await catalog.invokeWith({ app: undefined }, { toolId: 'bump', input: INPUT, dryRun: false, idempotencyKey: 'k-1' })
    expect(runs.count).toBe(1)
  })
})

describe('a misspelt or doubled option is refused, never read as absent', () => {
  it('an unknown query parameter on REST, the intents route and POST /mcp, with a hint when it is a near miss', async () => {
    const refused = await rest({ dryrun: 'true' }, {})
    expect(refused.statusCode).toBe(400)
    expect(refused.json<{ errors: Array<{ pointer: string, message: string }> }>().errors).toEqual([expect.objectContaining({ pointer: '/query/dryrun', message: expect.stringContaining('did you mean dryRun?') })])
    expect((await intent({ dry_run: 'true' }, {})).statusCode).toBe(400)
    expect(pointersOf((await mcpHttp(rpc({}), { DryRun: 'true' })).error?.data)).toEqual(['/query/DryRun'])
    expect(runs.count).toBe(0)
  })

  it('an unknown key in toolgate\'s _meta namespace, and a _meta that is not an object', async () => {
    expect(pointersOf((await mcpHttp(rpc({ _meta: { 'dev.toolgate/dryrun': true } }))).error?.data)).toEqual([metaPointer('dev.toolgate/dryrun')])
    expect((await mcpHttp(rpc({ _meta: 'dry' }))).error?.code).toBe(-32602)
    // Keys of other namespaces are theirs, and pass.
    expect((await mcpHttp(rpc({ _meta: { 'com.example/trace': 'x', progressToken: 3 } }))).result?.isError).toBe(false)
    expect(runs.count).toBe(1)
  })

  it('the same option twice with two meanings (the query and _meta), and a query parameter given twice', async () => {
    const conflict = await mcpHttp(rpc({ _meta: { 'dev.toolgate/dryRun': false } }), { dryRun: 'true' })
    expect(pointersOf(conflict.error?.data)).toEqual([metaPointer('dev.toolgate/dryRun')])
    const twice = await app.inject({ method: 'POST', url: '/tools/bump?dryRun=true&dryRun=false', headers: auth(KEYS.admin), payload: INPUT })
    expect(twice.statusCode).toBe(400)
    expect(runs.count).toBe(0)
  })

  it('MCP arguments that are null are refused (absent arguments are none)', async () => {
    expect((await mcpHttp(rpc({ arguments: null }))).error?.code).toBe(-32602)
    expect(runs.count).toBe(0)
  })

  it('an intent resolves as a dry run only: dryRun=false is refused', async () => {
    const response = await intent({ dryRun: 'false' }, {})
    expect(response.statusCode).toBe(400)
    expect(pointersOf(response.json())).toEqual(['/query/dryRun'])
    expect(runs.count).toBe(0)
  })
})

/*
 * Over stdio the tools run in the command's own process: each run writes `RAN` to its stderr.
 */
describe('MCP over stdio (toolgate mcp, the built command)', { timeout: SLOW.PROCESS_MS }, () => {
  const root = fileURLToPath(new URL('../../', import.meta.url))
  const answers = new Map<number, (answer: Record<string, unknown>) => void>()
  let child: ChildProcessWithoutNullStreams
  let ran = 0
  let id = 0
  const send = async (params: Record<string, unknown>): Promise<{ error?: { code: number, data?: { errors?: Array<{ pointer: string }> } }, result?: Record<string, unknown> }> => {
    const next = ++id
    const answered = new Promise<Record<string, unknown>>(resolve => { answers.set(next, resolve) })
    child.stdin.write(JSON.stringify({ ...rpc(params), id: next }) + '\n')
    return await answered
  }

  beforeAll(async () => {
    child = spawn(process.execPath, ['dist/bin/toolgate.js', 'mcp', 'test/fixtures/option-tools'], {
      cwd: root, env: { PATH: process.env.PATH ?? '', LOG_LEVEL: 'warn', OPTION_TOOLS_LOG: 'stderr' },
    })
    createInterface({ input: child.stdout }).on('line', line => {
      const answer = JSON.parse(line) as { id: number }
      answers.get(answer.id)?.(answer)
    })
    child.stderr.on('data', (chunk: Buffer) => { ran += chunk.toString().split('\n').filter(line => line === 'RAN').length })
    // The control: a well-formed call runs, once the command is up.
    expect((await send({})).result?.isError).toBe(false)
    for (let waited = 0; ran < 1 && waited < 5_000; waited += 20) await sleep(20)
    expect(ran).toBe(1)
  }, SLOW.PROCESS_MS)
  afterAll(() => { child.stdin.end() })

  it.each(OPTIONS)('%s in _meta', async option => {
    const key = META_KEY[option]
    const answer = await send({ _meta: { [key]: MALFORMED[option].json } })
    expect(answer.error?.code, JSON.stringify(answer)).toBe(-32602)
    expect(pointersOf(answer.error?.data)).toEqual([metaPointer(key)])
    expect(ran).toBe(1)
  })

  it('a well-formed dry run runs nothing, arguments: null is refused', async () => {
    expect((await send({ _meta: { 'dev.toolgate/dryRun': true } })).result).toBeDefined()
    expect((await send({ arguments: null })).error?.code).toBe(-32602)
    expect(ran).toBe(1)
  })
})
