import { createHash } from 'node:crypto'
import { mkdtempSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { SLOW } from '../slow.js'
import { cleanPrefix, HAVE_REDIS, REDIS_URL, testPrefix } from './redis-env.js'
import { startReplicaProcess, stopReplicaProcess, type ReplicaProcess } from './replica-processes.js'

/*
 * Two gateway processes on one Redis, the operator's budget of 100 over every financial call,
 * and 1,000 transfers of 1 cent sent to both at once: exactly 100 run, the rest are refused,
 * and the ledger moved exactly 100 cents.
 */

const prefix = testPrefix()
const KEY = 'payer-key-0123456789'
const dir = mkdtempSync(join(tmpdir(), 'toolgate-limit-replicas-'))
const upstreams = join(dir, 'upstreams.json')
writeFileSync(upstreams, JSON.stringify({
  limits: { 'financial-daily': { effects: ['financial'], per: 'global', budget: { amount: 'input.amount', max: 100, window: 'day' } } },
}))
const env = {
  REDIS_URL, REDIS_PREFIX: prefix, TOOLS_DIR: 'tools', UPSTREAMS_FILE: upstreams,
  LEDGER_DAILY_BUDGET_CENTS: 'off', LEDGER_APPROVAL_ABOVE_CENTS: 'off', METRICS: 'true',
  // The burst is the budget's test, not load shedding's: on a busy machine 1,000 calls at once
  // can delay the loop past the 1 s default, and a 503 OVERLOADED would stand in for a 429.
  MAX_EVENT_LOOP_DELAY_MS: '0',
  API_KEYS: `payer:${createHash('sha256').update(KEY).digest('hex')}:tools:read tools:call ledger:transfer`,
}

let replicas: ReplicaProcess[] = []

beforeAll(async () => {
  if (HAVE_REDIS) replicas = await Promise.all([startReplicaProcess(env), startReplicaProcess(env)])
}, SLOW.PROCESS_MS)
afterAll(async () => {
  await Promise.all(replicas.map(stopReplicaProcess))
  if (HAVE_REDIS) await cleanPrefix(prefix)
})

describe.skipIf(!HAVE_REDIS)('a budget shared by two replicas on one Redis', () => {
  it('of 1,000 concurrent calls of amount 1 against a budget of 100, exactly 100 run', async () => {
    const [a, b] = replicas.map(replica => replica.address) as [string, string]
    const post = (base: string, tool: string, body: object, headers: Record<string, string> = {}) => fetch(`${base}/tools/${tool}`, {
      method: 'POST', headers: { 'content-type': 'application/json', 'x-api-key': KEY, ...headers }, body: JSON.stringify(body),
    })
    const before = await (await post(a, 'ledger_balance', {})).json() as { accounts: Array<{ account: string, balance: number }> }
    const responses = await Promise.all(Array.from({ length: 1_000 }, async (_, i) => {
      // A session and a key each: the calls wait for no one's slot and never replay one another.
      const response = await post(i % 2 === 0 ? a : b, 'ledger_transfer', { from: 'alice', to: 'bob', amount: 1 }, { 'idempotency-key': `k${i}`, 'x-session-id': `s${i}` })
      return { status: response.status, code: response.status === 200 ? undefined : (await response.json() as { code: string }).code }
    }))
    const counts = new Map<string, number>()
    for (const { status, code } of responses) counts.set(`${status} ${code ?? ''}`.trim(), (counts.get(`${status} ${code ?? ''}`.trim()) ?? 0) + 1)
    expect(Object.fromEntries(counts)).toEqual({ 200: 100, '429 TOOLGATE_LIMIT_EXCEEDED': 900 })
    const after = await (await post(b, 'ledger_balance', {})).json() as { accounts: Array<{ account: string, balance: number }> }
    const balance = (of: typeof before, account: string): number => of.accounts.find(x => x.account === account)!.balance
    expect([balance(after, 'alice') - balance(before, 'alice'), balance(after, 'bob') - balance(before, 'bob')]).toEqual([-100, 100])
    // Both replicas read the one count: nothing left.
    for (const base of [a, b]) {
      const metrics = await (await fetch(`${base}/metrics`)).text()
      expect(metrics).toContain('toolgate_limit_remaining{limit="financial-daily",kind="budget"} 0')
    }
  }, SLOW.PROCESS_MS)
})
