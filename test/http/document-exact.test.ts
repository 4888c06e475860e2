import { fileURLToPath } from 'node:url'
import { describe, expect, it } from 'vitest'
import { loadToolsFromDir } from '../../src/services/loading/loader.js'
import { auth, KEYS, testApp } from './helpers.js'
import { expectProblem } from './problem-shape.js'

type Responses = Record<string, { headers?: Record<string, unknown> }>

const shipped = async () => await loadToolsFromDir(fileURLToPath(new URL('../../tools', import.meta.url)))

async function responsesOf (app: Awaited<ReturnType<typeof testApp>>, path: string): Promise<Responses> {
  const document = (await app.inject({ method: 'GET', url: '/openapi.json', headers: auth(KEYS.admin) })).json()
  return document.paths[path].post.responses
}

describe('each tool operation documents exactly what it can answer here', () => {
  it('202 (and the approval\'s 410) only where a call can wait for approval: a declaration, an escalation, a rule', async () => {
    const app = await testApp({}, await shipped())
    const timeNow = await responsesOf(app, '/tools/time_now')
    expect(Object.keys(timeNow)).not.toContain('202')
    expect(Object.keys(timeNow)).not.toContain('410')
    expect(Object.keys(timeNow)).toEqual(expect.arrayContaining(['200', '400', '401', '403', '404', '409', '413', '415', '422', '429', '500', '502', '503', '504']))
    // requiresApproval (the ledger above a threshold), supportsEscalation (notes).
    for (const path of ['/tools/ledger_transfer', '/tools/notes_write']) expect(Object.keys(await responsesOf(app, path))).toEqual(expect.arrayContaining(['202', '410']))
  })

  it('an approval rule that can match the tool gives it 202', async () => {
    const app = await testApp({ approvalRules: [{ tools: ['time_*'], principal: 'caller' }] }, await shipped())
    expect(Object.keys(await responsesOf(app, '/tools/time_now'))).toContain('202')
    expect(Object.keys(await responsesOf(app, '/tools/notes_read'))).not.toContain('202')
  })

  it('the 202 documents its Location header, and answers it', async () => {
    const app = await testApp({ approvalRules: [{ tools: ['slow_write'] }] })
    const documented = (await responsesOf(app, '/tools/slow_write'))['202']!
    expect(documented.headers).toMatchObject({ Location: { schema: { type: 'string' } } })
    const pending = await app.inject({ method: 'POST', url: '/tools/slow_write', headers: auth(KEYS.caller), payload: { ms: 1 } })
    expect(pending.statusCode).toBe(202)
    expect(pending.headers.location).toBe(`/approvals/${pending.json().id}`)
  })
})

describe('400 pointers point into the body that was sent', () => {
  async function pendingApproval () {
    const app = await testApp({ approvalRules: [{ tools: ['slow_write'] }] })
    const id = (await app.inject({ method: 'POST', url: '/tools/slow_write', headers: auth(KEYS.caller), payload: { ms: 1 } })).json().id as string
    return { app, id }
  }

  it.each(['approve', 'reject'])('POST /approvals/{id}/%s: a bad note is /note, an extra property the body itself, as for a tool call', async decision => {
    const { app, id } = await pendingApproval()
    const decide = (payload: object) => app.inject({ method: 'POST', url: `/approvals/${id}/${decision}`, headers: auth(KEYS.admin), payload })
    expect(expectProblem(await decide({ note: 5 }), 400, 'TOOLGATE_INVALID_INPUT').errors).toEqual([expect.objectContaining({ pointer: '/note' })])
    expect(expectProblem(await decide({ note: 'ok', extra: 1 }), 400, 'TOOLGATE_INVALID_INPUT').errors).toEqual([expect.objectContaining({ pointer: '', code: 'unrecognized_keys' })])
  })

  it('which is the convention of a tool call\'s input issues', async () => {
    const app = await testApp()
    const body = expectProblem(await app.inject({ method: 'POST', url: '/tools/echo', headers: auth(KEYS.admin), payload: { text: 5, extra: 1 } }), 400)
    expect(body.errors).toEqual(expect.arrayContaining([expect.objectContaining({ pointer: '/text' }), expect.objectContaining({ pointer: '', code: 'unrecognized_keys' })]))
  })

  it('POST /intents/resolve: a bad input.key is /input/key', async () => {
    const app = await testApp({}, await shipped())
    const response = await app.inject({ method: 'POST', url: '/intents/resolve', headers: auth(KEYS.admin), payload: { intent: 'notes_delete', input: { key: '!bad' } } })
    expect(expectProblem(response, 400, 'TOOLGATE_INVALID_INPUT').errors).toEqual([expect.objectContaining({ pointer: '/input/key' })])
  })
})

describe('Approval-Id', () => {
  it('longer than its documented maxLength answers 400 pointing at the header, not 404', async () => {
    const app = await testApp({ approvalRules: [{ tools: ['slow_write'] }] })
    const document = (await app.inject({ method: 'GET', url: '/openapi.json', headers: auth(KEYS.admin) })).json()
    const header = document.paths['/tools/slow_write'].post.parameters.find((p: { name: string }) => p.name === 'approval-id')
    const maxLength = header.schema.maxLength as number
    const call = (id: string) => app.inject({ method: 'POST', url: '/tools/slow_write', headers: { ...auth(KEYS.caller), 'approval-id': id }, payload: { ms: 1 } })
    const body = expectProblem(await call('a'.repeat(maxLength + 1)), 400, 'TOOLGATE_INVALID_INPUT')
    expect(body.errors).toEqual([expect.objectContaining({ pointer: '/headers/approval-id' })])
    expectProblem(await call('a'.repeat(maxLength)), 404, 'TOOLGATE_APPROVAL_NOT_FOUND')
  })
})
