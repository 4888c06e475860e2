/**
 * A call is finished in one place, whatever face it came through: the same call over REST, MCP
 * over HTTP, MCP over stdio (the built command) and the intents route leaves the same record in
 * the audit trail and the same line in the log, differing only in what the face itself is.
 */
import { spawn } from 'node:child_process'
import { once } from 'node:events'
import { mkdtempSync, readFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import type { FastifyInstance } from 'fastify'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { buildApp } from '../../plugins/app.js'
import type { AnyTool } from '../../src/index.js'
import { loadConfig } from '../../src/services/config.js'
import optionTools from '../fixtures/option-tools/tools.js'
import { API_KEYS, auth, KEYS } from '../http/helpers.js'
import { SLOW } from '../slow.js'

type Line = Record<string, unknown>

const dir = mkdtempSync(join(tmpdir(), 'toolgate-one-finish-'))
const httpAudit = join(dir, 'http-audit.jsonl')
const stdioAudit = join(dir, 'stdio-audit.jsonl')
const httpLog: Line[] = []
let app: FastifyInstance

/** What a face itself is (and what differs per call): left out of the comparison. */
const FACE_FIELDS = new Set(['time', 'pid', 'hostname', 'reqId', 'callId', 'requestId', 'source', 'transport', 'principal', 'domain', 'durationMs', 'queueMs', 'seq', 'prev', 'hash', 'ts', 'level', 'executeMs'])

function shape (line: Line): Line {
  return Object.fromEntries(Object.entries(line).filter(([key]) => !FACE_FIELDS.has(key)).sort(([a], [b]) => a.localeCompare(b)))
}

const callLines = (lines: Line[]): Line[] => lines.filter(line => line.msg === 'tool call')
const auditLines = (path: string): Line[] => readFileSync(path, 'utf8').trim().split('\n').map(line => JSON.parse(line) as Line).filter(line => line.tool === 'bump')

beforeAll(async () => {
  const config = loadConfig({}, { apiKeys: API_KEYS, auditLog: httpAudit, auditLogInputs: true, auditFlushMs: 0 })
  app = await buildApp({ config, tools: optionTools as unknown as AnyTool[], logger: { level: 'info', stream: { write: (line: string) => { httpLog.push(JSON.parse(line) as Line) } } } })
})
afterAll(async () => { await app.close() })

const rpc = (meta: Record<string, unknown>): Record<string, unknown> => ({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'bump', arguments: { by: 1 }, _meta: meta } })

/** The same dry run, then the same call, over every HTTP face. */
async function overHttp (): Promise<void> {
  const headers = { ...auth(KEYS.admin) }
  const mcpHeaders = { ...headers, accept: 'application/json', 'mcp-protocol-version': '2025-11-25' }
  expect((await app.inject({ method: 'POST', url: '/tools/bump?dryRun=true', headers, payload: { by: 1 } })).statusCode).toBe(200)
  expect((await app.inject({ method: 'POST', url: '/mcp', headers: mcpHeaders, payload: rpc({ 'dev.toolgate/dryRun': true }) })).statusCode).toBe(200)
  expect((await app.inject({ method: 'POST', url: '/intents/resolve', headers, payload: { intent: 'bump', input: { by: 1 } } })).statusCode).toBe(200)
  expect((await app.inject({ method: 'POST', url: '/tools/bump', headers, payload: { by: 1 } })).statusCode).toBe(200)
  expect((await app.inject({ method: 'POST', url: '/mcp', headers: mcpHeaders, payload: rpc({}) })).statusCode).toBe(200)
}

/** The same dry run and call over stdio, to the built command with its own audit log; its log lines. */
async function overStdio (): Promise<Line[]> {
  const root = fileURLToPath(new URL('../../', import.meta.url))
  const child = spawn(process.execPath, ['dist/bin/toolgate.js', 'mcp', 'test/fixtures/option-tools'], { cwd: root, env: { PATH: process.env.PATH ?? '', AUDIT_LOG: stdioAudit, AUDIT_LOG_INPUTS: 'true', AUDIT_FLUSH_MS: '0' } })
  let stderr = ''
  child.stderr.on('data', (chunk: Buffer) => { stderr += chunk.toString() })
  let answers = 0
  child.stdout.on('data', (chunk: Buffer) => { answers += chunk.toString().split('\n').filter(line => line !== '').length })
  for (const [id, meta] of [[1, { 'dev.toolgate/dryRun': true }], [2, {}]] as const) {
    child.stdin.write(JSON.stringify({ ...rpc(meta), id }) + '\n')
    while (answers < id) await new Promise(resolve => setTimeout(resolve, 20))
  }
  child.stdin.end()
  await once(child, 'exit')
  return stderr.split('\n').filter(line => line.startsWith('{')).map(line => JSON.parse(line) as Line)
}

describe('one place finishes a call', { timeout: SLOW.PROCESS_MS }, () => {
  it('every face writes the same audit line and the same log line for the same call', async () => {
    await overHttp()
    const stdioLog = await overStdio()
    await app.close()

    const http = auditLines(httpAudit)
    const stdio = auditLines(stdioAudit)
    // REST, MCP and intents dry runs; then REST and MCP runs. Over stdio: a dry run, then a run.
    expect(http.map(line => line.outcome)).toEqual(['dry_run', 'dry_run', 'dry_run', 'ok', 'ok'])
    expect(stdio.map(line => line.outcome)).toEqual(['dry_run', 'ok'])
    const [dryRun, run] = stdio.map(shape)
    for (const line of http.slice(0, 3)) expect(shape(line)).toEqual(dryRun)
    for (const line of http.slice(3)) expect(shape(line)).toEqual(run)

    const httpCalls = callLines(httpLog)
    const stdioCalls = callLines(stdioLog)
    expect(httpCalls.map(line => [line.transport, line.outcome])).toEqual([['rest', 'dry_run'], ['mcp', 'dry_run'], ['intents', 'dry_run'], ['rest', 'ok'], ['mcp', 'ok']])
    expect(stdioCalls.map(line => [line.transport, line.outcome])).toEqual([['mcp-stdio', 'dry_run'], ['mcp-stdio', 'ok']])
    const [dryLine, runLine] = stdioCalls.map(shape)
    for (const line of httpCalls.slice(0, 3)) expect(shape(line)).toEqual(dryLine)
    for (const line of httpCalls.slice(3)) expect(shape(line)).toEqual(runLine)
  })
})
