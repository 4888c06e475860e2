import { spawn, type ChildProcess } from 'node:child_process'
import { randomUUID } from 'node:crypto'
import { readFileSync } from 'node:fs'
import { fileURLToPath } from 'node:url'
import { afterAll, beforeAll, expect, it } from 'vitest'
import { SLOW } from '../slow.js'

/*
 * The compose stack's shipped configuration (deploy/toolgate.json and the gateway's
 * environment in docker-compose.yml), served by the real command: a ledger transfer above the
 * configured line waits for the demo approver.
 */

const root = fileURLToPath(new URL('../..', import.meta.url))
const compose = readFileSync(new URL('../../docker-compose.yml', import.meta.url), 'utf8')
const threshold = /LEDGER_APPROVAL_ABOVE_CENTS: "(\d+)"/.exec(compose)?.[1]
const DEMO = 'toolgate-demo-key-change-me'
const APPROVER = 'toolgate-demo-approver-change-me'
let child: ChildProcess
let base: string

beforeAll(async () => {
  child = spawn(process.execPath, ['dist/bin/toolgate.js', 'serve'], {
    cwd: root,
    env: { ...process.env, CONFIG_FILE: 'deploy/toolgate.json', LEDGER_APPROVAL_ABOVE_CENTS: threshold, HOST: '127.0.0.1', PORT: '0', LOG_LEVEL: 'info', REDIS_URL: '' },
  })
  base = await new Promise((resolve, reject) => {
    let out = ''
    child.stdout!.on('data', chunk => {
      out += String(chunk)
      const match = /"address":"(http:\/\/[^"]+)"/.exec(out)
      if (match !== null) resolve(match[1]!)
    })
    child.on('exit', code => { reject(new Error(`gateway exited ${code}: ${out}`)) })
  })
}, SLOW.PROCESS_MS)

afterAll(async () => {
  if (child.exitCode === null) {
    const exited = new Promise(resolve => child.once('exit', resolve))
    child.kill('SIGTERM')
    await exited
  }
})

const post = (path: string, key: string, body: object = {}, headers: Record<string, string> = {}) =>
  fetch(`${base}${path}`, { method: 'POST', headers: { 'content-type': 'application/json', 'x-api-key': key, ...headers }, body: JSON.stringify(body) })

it('the compose config makes a ledger transfer above its line wait for the demo approver, then run once', async () => {
  expect(threshold).toBe('5000')
  const below = await post('/tools/ledger_transfer', DEMO, { from: 'bob', to: 'carol', amount: 5_000 }, { 'idempotency-key': randomUUID() })
  expect(below.status).toBe(200)
  const order = { from: 'alice', to: 'carol', amount: 5_001 }
  const asked = await post('/tools/ledger_transfer', DEMO, order, { 'idempotency-key': randomUUID() })
  expect(asked.status).toBe(202)
  const { id, requestedBy, effects } = await asked.json() as { id: string, requestedBy: string, effects: string[] }
  expect([requestedBy, effects]).toEqual(['demo', ['affects-others', 'financial', 'irreversible']])
  expect((await post(`/approvals/${id}/approve`, DEMO)).status).toBe(403) // the demo key may not approve
  expect((await post(`/approvals/${id}/approve`, APPROVER, { note: 'fine' })).status).toBe(200)
  const ran = await post('/tools/ledger_transfer', DEMO, order, { 'approval-id': id })
  expect(ran.status).toBe(200)
  expect(await ran.json()).toMatchObject({ amount: 5_001, balancesAfter: { alice: 4_999, carol: 10_001 } })
  expect((await post('/tools/ledger_transfer', DEMO, order, { 'approval-id': id })).headers.get('idempotent-replayed')).toBe('true')
})
