import { spawn, type ChildProcess } from 'node:child_process'
import { createHash } from 'node:crypto'
import { fileURLToPath } from 'node:url'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { SLOW } from '../slow.js'
import { cleanPrefix, HAVE_REDIS, REDIS_URL, testPrefix } from './redis-env.js'

const root = fileURLToPath(new URL('../..', import.meta.url))
const prefix = testPrefix()
const sha = (key: string): string => createHash('sha256').update(key).digest('hex')
const KEYS = { payer: 'payer-key-0123456789', limited: 'limited-key-0123456789' }
const env = {
  REDIS_URL, REDIS_PREFIX: prefix, PORT: '0', LOG_LEVEL: 'info', RATE_LIMIT_MAX: '20', RATE_LIMIT_WINDOW_MS: '60000',
  API_KEYS: `payer:${sha(KEYS.payer)}:tools:read tools:call ledger:transfer;limited:${sha(KEYS.limited)}:tools:read tools:call`,
}

const children: ChildProcess[] = []
let addresses: string[] = []

/** One gateway process; resolves with its address once it listens. */
function startReplica (): Promise<string> {
  // node itself (not the tsx wrapper), so that SIGTERM reaches the server and nothing outlives the test.
  const child = spawn(process.execPath, ['dist/bin/toolgate.js', 'serve'], { cwd: root, env: { ...process.env, ...env } })
  children.push(child)
  return new Promise((resolve, reject) => {
    let out = ''
    child.stdout!.on('data', chunk => {
      out += String(chunk)
      const match = /"address":"(http:\/\/[^"]+)"/.exec(out)
      if (match !== null) resolve(match[1]!)
    })
    child.on('exit', code => { reject(new Error(`replica exited ${code}: ${out}`)) })
  })
}

const post = (base: string, tool: string, body: object, key: string, headers: Record<string, string> = {}) =>
  fetch(`${base}/tools/${tool}`, { method: 'POST', headers: { 'content-type': 'application/json', 'x-api-key': key, ...headers }, body: JSON.stringify(body) })

beforeAll(async () => {
  if (HAVE_REDIS) addresses = await Promise.all([startReplica(), startReplica()])
}, SLOW.PROCESS_MS)
afterAll(async () => {
  await Promise.all(children.map(child => new Promise(resolve => {
    if (child.exitCode !== null) { resolve(undefined); return }
    child.once('exit', resolve)
    child.kill('SIGTERM')
  })))
  if (HAVE_REDIS) await cleanPrefix(prefix)
})

describe.skipIf(!HAVE_REDIS)('two gateway replicas on one Redis', () => {
  it('the same idempotency key sent to both at once moves the money exactly once', async () => {
    const [a, b] = addresses as [string, string]
    const transfer = { from: 'alice', to: 'bob', amount: 1234 }
    const headers = { 'idempotency-key': 'pay-bob-once' }
    const responses = await Promise.all([post(a, 'ledger_transfer', transfer, KEYS.payer, headers), post(b, 'ledger_transfer', transfer, KEYS.payer, headers)])
    const statuses = responses.map(r => r.status).sort()
    // One ran; the other either saw it running (409) or replayed its result (200, replayed).
    expect(statuses[0]).toBe(200)
    expect([200, 409]).toContain(statuses[1])
    const retry = await post(b, 'ledger_transfer', transfer, KEYS.payer, headers)
    expect(retry.status).toBe(200)
    expect(retry.headers.get('idempotent-replayed')).toBe('true')
    const balances = await (await post(a, 'ledger_balance', {}, KEYS.payer)).json() as { accounts: Array<{ account: string, balance: number }> }
    expect(Object.fromEntries(balances.accounts.map(x => [x.account, x.balance]))).toMatchObject({ alice: 10_000 - 1234, bob: 5_000 + 1234 })
  })

  it('the rate limit is shared across both replicas', async () => {
    const [a, b] = addresses as [string, string]
    const statuses: number[] = []
    for (let i = 0; i < 24; i++) statuses.push((await post(i % 2 === 0 ? a : b, 'time_now', {}, KEYS.limited)).status)
    expect(statuses.slice(0, 20).every(s => s === 200)).toBe(true)
    expect(statuses.slice(20)).toEqual([429, 429, 429, 429])
    const limited = await post(a, 'time_now', {}, KEYS.limited)
    expect(limited.headers.get('retry-after')).toBeTruthy()
    expect(limited.headers.get('content-type')).toMatch(/problem\+json/)
  })
})
