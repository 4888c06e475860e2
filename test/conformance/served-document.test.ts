import { fileURLToPath } from 'node:url'
import type { FastifyInstance, InjectOptions } from 'fastify'
import { describe, expect, it } from 'vitest'
import { SLOW } from '../slow.js'
import { z } from 'zod'
import { defineTool, ToolError } from '../../src/index.js'
import { createUrlFetchTool } from '../../tools/url-fetch.js'
import { hashApiKey } from '../../src/services/auth/api-keys.js'
import { loadToolsFromDir } from '../../src/services/loading/loader.js'
import { httpTools } from '../fixtures/http-tools.js'
import { API_KEYS, auth, KEYS, testApp } from '../http/helpers.js'
import { ResponseValidator, type Operation } from './validator.js'

const NO_SCOPES = 'no-scopes-key-0123456789'
const keyed = defineTool({
  id: 'keyed', kind: 'write', description: 'Needs an idempotency key.', isReadOnly: false, isConcurrencySafe: false, requiresIdempotencyKey: true,
  inputSchema: z.object({ n: z.number() }), outputSchema: z.object({ n: z.number() }), authorize () {}, execute: ({ n }) => ({ n }),
})
/** Declares the 423 it answers: the document holds it. */
const locker = defineTool({
  id: 'locker', kind: 'write', description: 'Fails as asked.', isReadOnly: false, isConcurrencySafe: false,
  errors: [{ status: 423, code: 'LOCKED', description: 'Locked.' }],
  inputSchema: z.object({ fail: z.enum(['none', 'locked']) }), outputSchema: z.object({ ok: z.boolean() }), authorize () {},
  execute: ({ fail }) => {
    if (fail === 'locked') throw new ToolError(423, 'LOCKED', 'locked')
    return { ok: true }
  },
})
/** url_fetch with an allowlist and a fake resolver, so that each of its declared failures can be reached offline. */
const fetcher = createUrlFetchTool({
  allowedHosts: ['*.test', '127.0.0.1:9'],
  allowLoopback: true,
  lookup: async host => {
    if (host === 'private.test') return [{ address: '10.0.0.1', family: 4 }]
    throw Object.assign(new Error('no such host'), { code: 'ENOTFOUND' })
  },
})
/** Three calls a day per principal: the probes past them are answered 429 with the limit, as documented. */
const metered = defineTool({
  id: 'metered', kind: 'write', description: 'Three calls a day.', isReadOnly: false, isConcurrencySafe: false,
  limits: [{ name: 'daily', per: 'principal', quota: { calls: 3, window: 'day' } }],
  inputSchema: z.object({ n: z.number() }), outputSchema: z.object({ n: z.number() }), authorize () {}, execute: ({ n }) => ({ n }),
})
const tools = [...httpTools, keyed, locker, fetcher, metered]
/** A valid input per tool; the rest take `{}`. `approval_request` waits for a person: it only gets dry runs of a valid input. */
const VALID: Record<string, unknown> = {
  echo: { text: 'hi' }, slow_write: { ms: 1 }, metered: { n: 1 }, guarded: { deny: false }, keyed: { n: 1 },
  notes_write: { key: 'todo', text: 'milk' }, notes_read: { key: 'todo' }, notes_delete: { key: 'todo' },
  ledger_transfer: { from: 'alice', to: 'bob', amount: 100 }, url_fetch: { url: 'https://example.com/' },
  approval_grant: { ticket: 'no-such-ticket', decision: 'approve' },
}
const DRY_ONLY: Record<string, unknown> = { approval_request: { question: 'May I?' } }
/** An input whose call waits for approval (the ledger asks above its threshold, 500.00 by default). */
const NEEDS_APPROVAL: Record<string, unknown> = { ledger_transfer: { from: 'alice', to: 'bob', amount: 60_000 } }

/**
 * Inputs that reach each failure a tool declares (`errors`), sent after the variants, in order
 * (the notes store keeps state between them): every declared code must be answered by one.
 */
const ERROR_PROBES: Record<string, unknown[]> = {
  locker: [{ fail: 'locked' }],
  // After the valid call and the first keyed one: the third runs, the fourth is past the limit.
  metered: [{ n: 1 }, { n: 2 }],
  notes_read: [{ key: 'missing' }],
  notes_write: [
    { key: 'locked', text: 'x', locked: true }, { key: 'locked', text: 'y', overwrite: true }, { key: 'locked', text: 'y' },
    // Past the 100 notes one principal may hold: NOTES_FULL.
    ...Array.from({ length: 100 }, (_, i) => ({ key: `fill/${i}`, text: 'x' })),
  ],
  notes_delete: [{ key: 'missing' }, { key: 'locked' }],
  ledger_balance: [{ account: 'nobody' }],
  ledger_transfer: [{ from: 'nobody', to: 'bob', amount: 1 }, { from: 'carol', to: 'bob', amount: 100 }],
  url_fetch: [{ url: 'https://elsewhere.example/' }, { url: 'http://private.test/' }, { url: 'http://nowhere.test/' }, { url: 'http://127.0.0.1:9/' }],
}
/** Declared failures a probe cannot reach in one run, and why. */
const UNREACHABLE: Record<string, Record<string, string>> = {
  // The shipped url_fetch reads FETCH_ALLOWED_HOSTS, unset here: every URL is HOST_NOT_ALLOWED. The fixture run reaches the rest.
  url_fetch: { ADDRESS_FORBIDDEN: 'no allowlist', HOST_UNRESOLVED: 'no allowlist', FETCH_FAILED: 'no allowlist' },
}

type Variant = { label: string, request: InjectOptions }

/** Valid and invalid requests for one operation: each answer must be documented and match. */
function variants (path: string, method: string, operation: Operation, firstTool: string): Variant[] {
  // `{id}` takes a tool id; any other path parameter (another plugin's routes) an unknown value.
  const fill = (id: string): string => path.replace('{id}', id).replace(/\{[^}]+\}/g, 'unknown')
  const url = fill(firstTool)
  const admin = auth(KEYS.admin)
  if (method === 'get') {
    return [
      { label: 'valid', request: { method: 'GET', url, headers: admin } },
      { label: 'no credentials', request: { method: 'GET', url } },
      { label: 'no scopes', request: { method: 'GET', url, headers: auth(NO_SCOPES) } },
      { label: 'wrong key', request: { method: 'GET', url, headers: auth('wrong-key-0123456789') } },
      { label: 'credential in the query', request: { method: 'GET', url: `${url}?access_token=x`, headers: admin } },
      ...(path.includes('{')
        ? [
            { label: 'unknown id', request: { method: 'GET' as const, url: fill('not_a_tool'), headers: admin } },
            { label: 'inactive id', request: { method: 'GET' as const, url: fill('admin_only'), headers: auth(KEYS.caller) } },
            { label: 'over-long id', request: { method: 'GET' as const, url: fill('a'.repeat(70)), headers: admin } },
            { label: 'bad session id', request: { method: 'GET' as const, url, headers: { ...admin, 'x-session-id': 'bad session' } } },
          ]
        : []),
    ]
  }
  const toolId = path.slice(path.lastIndexOf('/') + 1)
  const valid = VALID[toolId] ?? {}
  // Each call in a session of its own, so a tool that never settles (hang) holds up nothing else.
  let session = 0
  const json = (payload: unknown, headers: Record<string, string> = admin, query = ''): InjectOptions => ({
    method: 'POST', url: `${url}${query}`, headers: { 'x-session-id': `s${session++}`, ...headers, 'content-type': 'application/json' }, payload: JSON.stringify(payload),
  })
  const key: Record<string, string> = operation.parameters?.some(p => p.name === 'idempotency-key' && p.required === true) === true ? { 'idempotency-key': `k-${toolId}` } : {}
  return [
    { label: 'valid', request: json(valid, { ...admin, ...key }) },
    ...(toolId in NEEDS_APPROVAL ? [{ label: 'needs approval', request: json(NEEDS_APPROVAL[toolId], { ...admin, ...(key['idempotency-key'] === undefined ? {} : { 'idempotency-key': `approval-${toolId}` }) }) }] : []),
    { label: 'valid, replayed with the same key', request: json(valid, { ...admin, 'idempotency-key': `replay-${toolId}` }) },
    { label: 'valid, replayed again', request: json(valid, { ...admin, 'idempotency-key': `replay-${toolId}` }) },
    { label: 'same key, other input', request: json({ other: true }, { ...admin, 'idempotency-key': `replay-${toolId}` }) },
    { label: 'invalid idempotency key', request: json(valid, { ...admin, 'idempotency-key': 'not valid' }) },
    { label: 'dry run', request: json(DRY_ONLY[toolId] ?? valid, admin, '?dryRun=true') },
    { label: 'dryRun=maybe', request: json(valid, admin, '?dryRun=maybe') },
    { label: 'plan mode', request: json(valid, admin, '?mode=plan') },
    { label: 'escalate', request: json(valid, admin, '?escalate=true') },
    { label: 'invalid input', request: json({ unexpected: [1, 2] }) },
    { label: 'not an object', request: json('a string') },
    { label: 'malformed JSON', request: { method: 'POST', url, headers: { ...admin, 'content-type': 'application/json' }, payload: '{"a":' } },
    { label: 'text/plain', request: { method: 'POST', url, headers: { ...admin, 'content-type': 'text/plain' }, payload: 'hi' } },
    { label: 'body over the limit', request: json({ pad: 'x'.repeat(5_000) }) },
    { label: 'no credentials', request: json(valid, {}) },
    { label: 'no scopes', request: json(valid, auth(NO_SCOPES)) },
    { label: 'read-only principal', request: json(valid, auth(KEYS.reader)) },
    { label: 'inactive for the caller', request: json(valid, { ...auth(KEYS.caller), ...key }) },
    { label: 'bad session id', request: json(valid, { ...admin, 'x-session-id': 'bad session' }) },
    { label: 'credential in the query', request: json(valid, admin, '?api_key=x') },
    ...(ERROR_PROBES[toolId] ?? []).map((input, i) => ({ label: `error probe ${i}`, request: json(input, { ...admin, ...(key['idempotency-key'] === undefined ? {} : { 'idempotency-key': `probe-${toolId}-${i}` }) }) })),
  ]
}

/** The problem code of an answer, or undefined when it is none. */
function codeOf (response: { headers: Record<string, unknown>, body: string }): string | undefined {
  if (!String(response.headers['content-type']).startsWith('application/problem+json')) return undefined
  return (JSON.parse(response.body) as { code?: string }).code
}

/** Each failure the operation declares was answered with its status and code, unless the run cannot reach it. */
function expectDeclaredAnswered (toolId: string, operation: Operation, answered: ReadonlySet<string>, unreachable: readonly string[]): void {
  const declared = (operation['x-tool-errors'] ?? []).map(e => `${e.status} ${e.code}`)
  const expected = (operation['x-tool-errors'] ?? []).filter(e => !unreachable.includes(e.code)).map(e => `${e.status} ${e.code}`)
  expect(expected.filter(entry => !answered.has(entry)), `${toolId}: declared failures no probe answered`).toEqual([])
  // The excuses stay honest: a code excused here is declared, and no probe answered it after all.
  for (const code of unreachable) expect(declared.some(entry => entry.endsWith(` ${code}`)) && ![...answered].some(entry => entry.endsWith(` ${code}`)), `${toolId}: ${code} excused`).toBe(true)
}

/**
 * Both directions: every answer is documented and validates; a tool operation documents 202
 * exactly when the probes (a valid call, one that needs approval, an escalation) got one; and
 * each failure it declares (`x-tool-errors`) was answered, with its status and code.
 */
async function conformanceOf (app: FastifyInstance, firstTool: string, unreachable: Record<string, Record<string, string>> = {}): Promise<void> {
  const served = await app.inject({ method: 'GET', url: '/openapi.json', headers: auth(KEYS.admin) })
  const document = served.json<{ paths: Record<string, Record<string, Operation>> }>()
  const validator = new ResponseValidator(document)
  let approvable = 0
  for (const [path, item] of Object.entries(document.paths)) {
    for (const [method, operation] of Object.entries(item)) {
      const answered = new Set<number>()
      const codes = new Set<string>()
      for (const { label, request } of variants(path, method, operation, firstTool)) {
        const response = await app.inject(request)
        answered.add(response.statusCode)
        codes.add(`${response.statusCode} ${codeOf(response) ?? ''}`)
        validator.check(path, method, response, `${label} (${operation.operationId ?? path})`)
      }
      if (!/^\/tools\/[a-z]/.test(path) || method !== 'post') continue
      expectDeclaredAnswered(path.slice('/tools/'.length), operation, codes, Object.keys(unreachable[path.slice('/tools/'.length)] ?? {}))
      expect('202' in operation.responses, `${path}: 202 documented, answered: ${[...answered].join(', ')}`).toBe(answered.has(202))
      if (answered.has(202)) approvable++
    }
  }
  // The probes reached tools that wait for approval: the check above compared something.
  expect(approvable).toBeGreaterThan(0)
}

describe('the served document tells the truth (Ajv against /openapi.json)', () => {
  it('the check itself fails on an undocumented status, a wrong media type and a body that does not match', async () => {
    const app = await testApp({}, tools)
    const document = (await app.inject({ method: 'GET', url: '/openapi.json', headers: auth(KEYS.admin) })).json<{ paths: Record<string, Record<string, Operation>> }>()
    const ok = await app.inject({ method: 'POST', url: '/tools/echo', headers: auth(KEYS.admin), payload: { text: 'hi' } })
    const validator = (): ResponseValidator => new ResponseValidator(structuredClone(document))
    validator().check('/tools/echo', 'post', ok, 'as served')
    const undocumented = structuredClone(document)
    delete undocumented.paths['/tools/echo']!.post!.responses['200']
    expect(() => { new ResponseValidator(undocumented).check('/tools/echo', 'post', ok, 'x') }).toThrow(/not documented/)
    const lying = structuredClone(document)
    lying.paths['/tools/echo']!.post!.responses['200']!.content!['application/json']!.schema = { type: 'object', required: ['nope'] }
    expect(() => { new ResponseValidator(lying).check('/tools/echo', 'post', ok, 'x') }).toThrow(/does not match/)
    const dry = await app.inject({ method: 'POST', url: '/tools/echo?dryRun=true', headers: auth(KEYS.admin), payload: { text: 'hi' } })
    const noDryType = structuredClone(document)
    delete noDryType.paths['/tools/echo']!.post!.responses['200']!.content!['application/vnd.toolgate.dry-run+json']
    expect(() => { new ResponseValidator(noDryType).check('/tools/echo', 'post', dry, 'x') }).toThrow(/answered application\/vnd/)
  })

  it('every answer to valid and invalid requests of every operation is documented and validates', async () => {
    const app = await testApp({
      apiKeys: [...API_KEYS, { principal: 'nobody', sha256: hashApiKey(NO_SCOPES), scopes: [] }],
      bodyLimit: 4_096,
      // Wrong keys are part of the probe: leave them unthrottled here (the throttle's 429 is tested on its own).
      authFailureLimit: 0,
    }, tools)
    await conformanceOf(app, 'echo')
    // The probes used up `metered`'s limit: its answers above included the documented 429, and so does this one.
    const refused = await app.inject({ method: 'POST', url: '/tools/metered', headers: { ...auth(KEYS.admin), 'content-type': 'application/json' }, payload: '{"n":1}' })
    expect([refused.statusCode, codeOf(refused)]).toEqual([429, 'TOOLGATE_LIMIT_EXCEEDED'])
    const document = (await app.inject({ method: 'GET', url: '/openapi.json', headers: auth(KEYS.admin) })).json<{ paths: Record<string, Record<string, Operation>> }>()
    new ResponseValidator(document).check('/tools/metered', 'post', refused, 'past its limit')
  }, SLOW.CPU_MS)

  it('so does every answer of the shipped tools', async () => {
    const shipped = await loadToolsFromDir(fileURLToPath(new URL('../../tools', import.meta.url)))
    // The admin may move money here, large sums included, so the ledger's calls reach its approval.
    const [admin, ...others] = API_KEYS
    const treasurer = { ...admin!, scopes: [...admin!.scopes, 'ledger:transfer', 'ledger:transfer:large'] }
    const app = await testApp({ apiKeys: [treasurer, ...others, { principal: 'nobody', sha256: hashApiKey(NO_SCOPES), scopes: [] }], bodyLimit: 4_096, authFailureLimit: 0 }, shipped)
    await conformanceOf(app, 'time_now', UNREACHABLE)
  }, SLOW.CPU_MS)
})

describe('other methods on documented paths', () => {
  it('answer 405 problem+json with Allow, as each operation of the path documents', async () => {
    const app = await testApp({}, tools)
    const document = (await app.inject({ method: 'GET', url: '/openapi.json', headers: auth(KEYS.admin) })).json<{ paths: Record<string, Record<string, Operation>> }>()
    const validator = new ResponseValidator(document)
    for (const [path, item] of Object.entries(document.paths)) {
      const url = path.replace(/\{[^}]+\}/g, 'echo')
      for (const method of ['PUT', 'PATCH', 'DELETE'] as const) {
        const response = await app.inject({ method, url, headers: auth(KEYS.admin) })
        expect(response.statusCode).toBe(405)
        expect(String(response.headers.allow)).toMatch(/GET|POST/)
        for (const documented of Object.keys(item)) validator.check(path, documented, response, `${method} ${url}`)
      }
    }
  })
})
