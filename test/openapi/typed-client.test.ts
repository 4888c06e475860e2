import { execFile } from 'node:child_process'
import { mkdtemp, rm, symlink, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { promisify } from 'node:util'
import openapiTS, { astToString } from 'openapi-typescript'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { loadToolsFromDir } from '../../src/services/loading/loader.js'
import { testApp } from '../http/helpers.js'
import { SLOW } from '../slow.js'

/**
 * A client generated from the document as a user would make one (openapi-typescript types,
 * openapi-fetch calls), compiled with `tsc --strict`: what the document says an operation can
 * answer is what the client's types let it read.
 */

const ROOT = fileURLToPath(new URL('../..', import.meta.url))
const run = promisify(execFile)
let dir: string

// `application/json`: the client calls without dryRun, so it reads the JSON answers only.
const HEADER = `import createClient from 'openapi-fetch'
import type { paths } from './schema.js'

const client = createClient<paths, 'application/json'>({ baseUrl: 'http://127.0.0.1:3000', headers: { 'x-api-key': 'a-key' } })
`

/** A read-only tool no approval can concern: its 200 is its output, read with no cast. */
const READ_ONLY = `export async function now (): Promise<string> {
  const { data, response } = await client.POST('/tools/time_now', { body: { timeZone: 'UTC' } })
  if (data === undefined) throw new Error(\`status \${response.status}\`)
  return data.iso
}
`

/** A tool that can wait for approval: its success is the output or the pending approval, told apart by narrowing. */
const APPROVABLE = `export async function transfer (): Promise<string> {
  const { data, response } = await client.POST('/tools/ledger_transfer', {
    params: { header: { 'idempotency-key': 'k-1' } },
    body: { from: 'alice', to: 'bob', amount: 100 },
  })
  if (data === undefined) throw new Error(\`status \${response.status}\`)
  if ('inputDigest' in data) return \`waits for approval \${data.id} (\${data.status})\`
  return data.transferId
}
`

/** The same without narrowing: it must not compile, or the check above proves nothing. */
const UNNARROWED = `export async function transfer (): Promise<string> {
  const { data } = await client.POST('/tools/ledger_transfer', {
    params: { header: { 'idempotency-key': 'k-1' } },
    body: { from: 'alice', to: 'bob', amount: 100 },
  })
  return data === undefined ? '' : data.transferId
}
`

/** A tool's declared failures are typed: 423 and 507 of notes_write, each with exactly its code. */
const DECLARED_ERRORS = `type WriteResponses = paths['/tools/notes_write']['post']['responses']
export const locked: WriteResponses[423]['content']['application/problem+json']['code'] = 'NOTE_LOCKED'
export const full: WriteResponses[507]['content']['application/problem+json']['code'] = 'NOTES_FULL'
`

/** The same statuses where they cannot happen, and another code: none of it may compile. */
const UNDECLARED_ERRORS = `type WriteResponses = paths['/tools/notes_write']['post']['responses']
export type ReadLocked = paths['/tools/notes_read']['post']['responses'][423]
export const wrong: WriteResponses[423]['content']['application/problem+json']['code'] = 'NOTES_FULL'
`

async function compiles (source: string): Promise<{ ok: boolean, output: string }> {
  await writeFile(join(dir, 'client.ts'), source)
  const tsc = join(ROOT, 'node_modules', 'typescript', 'bin', 'tsc')
  const args = ['--strict', '--noEmit', '--skipLibCheck', '--target', 'es2022', '--module', 'nodenext', '--moduleResolution', 'nodenext', 'client.ts']
  try {
    await run(process.execPath, [tsc, ...args], { cwd: dir, timeout: SLOW.COMPILE_MS })
    return { ok: true, output: '' }
  } catch (error) {
    return { ok: false, output: String((error as { stdout?: string }).stdout) }
  }
}

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'toolgate-typed-client-'))
  await symlink(join(ROOT, 'node_modules'), join(dir, 'node_modules'), 'dir')
  await writeFile(join(dir, 'package.json'), '{ "type": "module" }\n')
  const app = await testApp({}, await loadToolsFromDir(join(ROOT, 'tools')))
  await app.ready()
  await writeFile(join(dir, 'schema.ts'), astToString(await openapiTS(app.openapiDocument() as never)))
}, SLOW.COMPILE_MS)
afterAll(async () => { await rm(dir, { recursive: true, force: true }) })

describe('a client generated from the document (openapi-typescript + openapi-fetch, tsc --strict)', () => {
  it('reads a read-only tool\'s output with no cast, and narrows a tool that can answer 202', async () => {
    const result = await compiles(HEADER + READ_ONLY + APPROVABLE)
    expect(result.output).toBe('')
    expect(result.ok).toBe(true)
  }, SLOW.COMPILE_MS)

  it('cannot read an approvable tool\'s output without telling it from the pending approval', async () => {
    const result = await compiles(HEADER + UNNARROWED)
    expect(result.ok).toBe(false)
    expect(result.output).toMatch(/transferId/)
  }, SLOW.COMPILE_MS)

  it('knows the statuses and codes a tool declares in errors, on that tool only', async () => {
    const declared = await compiles(HEADER + DECLARED_ERRORS)
    expect(declared.output).toBe('')
    expect(declared.ok).toBe(true)
    const undeclared = await compiles(HEADER + UNDECLARED_ERRORS)
    expect(undeclared.ok).toBe(false)
    expect(undeclared.output).toMatch(/Property '423' does not exist/)
    expect(undeclared.output).toMatch(/"NOTES_FULL"' is not assignable/)
  }, SLOW.COMPILE_MS * 2)
})
