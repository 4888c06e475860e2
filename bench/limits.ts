/**
 * What one limit costs a call, side by side with the same call under none: in process (the
 * counts in memory), and with the counts in Redis (REDIS_URL, default redis://127.0.0.1:6379),
 * beside the floor of the latter, one bare script round trip to the same Redis. Rounds
 * alternate the two sides, so drift hits both; the figure is the median ratio of the rounds.
 *
 *   npm run bench:limits [-- --calls 100000 --rounds 9 --concurrency 32]
 */
import { parseArgs } from 'node:util'
import { z } from 'zod'
import { buildApp } from '../plugins/app.js'
import { defineTool, defineToolCatalog, type Invoker } from '../src/index.js'
import { loadConfig } from '../src/services/config.js'
import { createRedisClient, whenReady } from '../src/services/redis/client.js'
import { RedisLimitStore } from '../src/services/redis/limit-store.js'

const { values } = parseArgs({ options: { calls: { type: 'string', default: '100000' }, rounds: { type: 'string', default: '9' }, concurrency: { type: 'string', default: '32' } } })
const CALLS = Number(values.calls)
const ROUNDS = Number(values.rounds)
const CONCURRENCY = Number(values.concurrency)

const echo = {
  id: 'echo', kind: 'read', description: 'Echo the text back.',
  inputSchema: z.object({ text: z.string() }), outputSchema: z.object({ text: z.string() }),
  isReadOnly: true, isConcurrencySafe: true, authorize () {}, execute: (input: { text: string }) => ({ text: input.text }),
}
// A quota never reached: every call is decided and charged, none refused.
const LIMIT = { name: 'daily', per: 'principal', quota: { calls: 1_000_000_000, window: 'day' } } as const
const input = { text: 'hello' }

function invoker (limited: boolean, store?: RedisLimitStore): Invoker {
  return defineToolCatalog([{ ...echo, ...(limited ? { limits: [LIMIT] } : {}) }], store === undefined ? {} : { limits: { store } })
    .bind({ app: undefined, requester: 'bench', domain: 'bench' })
}

/** Microseconds per call, `calls` calls, `concurrency` at a time. */
async function usPerCall (call: () => Promise<unknown>, calls: number, concurrency: number): Promise<number> {
  const started = process.hrtime.bigint()
  let next = 0
  await Promise.all(Array.from({ length: concurrency }, async () => {
    while (next++ < calls) await call()
  }))
  return Number(process.hrtime.bigint() - started) / 1000 / calls
}

interface Pair { readonly plain: number, readonly limited: number }

/** Alternate the two sides round by round; the median of each, and the median of the ratios. */
async function sideBySide (plain: () => Promise<unknown>, limited: () => Promise<unknown>, calls: number, concurrency: number): Promise<Pair & { ratio: number }> {
  await usPerCall(plain, Math.ceil(calls / 5), concurrency)
  await usPerCall(limited, Math.ceil(calls / 5), concurrency)
  const rounds: Pair[] = []
  for (let i = 0; i < ROUNDS; i++) {
    const first = i % 2 === 0
    const a = await usPerCall(first ? plain : limited, calls, concurrency)
    const b = await usPerCall(first ? limited : plain, calls, concurrency)
    rounds.push(first ? { plain: a, limited: b } : { plain: b, limited: a })
  }
  return { plain: median(rounds.map(r => r.plain)), limited: median(rounds.map(r => r.limited)), ratio: median(rounds.map(r => r.limited / r.plain)) }
}

function median (values: readonly number[]): number {
  const sorted = [...values].sort((a, b) => a - b)
  return sorted[Math.floor(sorted.length / 2)]!
}

function line (label: string, result: Pair & { ratio: number }): void {
  console.log(`${label.padEnd(44)} ${result.plain.toFixed(2).padStart(8)} µs ${result.limited.toFixed(2).padStart(8)} µs   ${((result.ratio - 1) * 100).toFixed(1).padStart(6)} %`)
}

console.log(`calls per round: ${CALLS}, ${ROUNDS} rounds alternating, median; Node ${process.version}`)
console.log(`${'call'.padEnd(44)} ${'no limit'.padStart(11)} ${'one limit'.padStart(11)}   slower by`)

const memory = { plain: invoker(false), limited: invoker(true) }
line('in process, counts in memory, one at a time', await sideBySide(
  async () => await memory.plain.invoke({ toolId: 'echo', input }), async () => await memory.limited.invoke({ toolId: 'echo', input }), CALLS, 1))
// The floor: the same call beside the least a count can do by hand: a key of the principal and
// the day, one read and one write of a Map.
const counts = new Map<string, number>()
const byHand = async (): Promise<unknown> => {
  const key = `daily|bench|${Math.floor(Date.now() / 86_400_000)}`
  const used = counts.get(key) ?? 0
  if (used >= 1_000_000_000) throw new Error('over')
  counts.set(key, used + 1)
  return await memory.plain.invoke({ toolId: 'echo', input })
}
line('  floor: no limit + a count by hand, one at a time', await sideBySide(
  async () => await memory.plain.invoke({ toolId: 'echo', input }), byHand, CALLS, 1))

/** The same two tools over HTTP (Fastify's inject: the whole request path, no socket), one at a time. */
async function overHttp (label: string, redisUrl?: string): Promise<void> {
  const tools = [defineTool(echo as never), defineTool({ ...echo, id: 'echo_limited', limits: [LIMIT] } as never)]
  const app = await buildApp({ config: loadConfig({}, { logLevel: 'warn', ...(redisUrl === undefined ? {} : { redisUrl, redisPrefix: `toolgate:bench:${process.pid}:` }) }), tools })
  const request = (tool: string) => async (): Promise<unknown> => await app.inject({ method: 'POST', url: `/tools/${tool}`, headers: { 'content-type': 'application/json' }, payload: '{"text":"hello"}' })
  line(label, await sideBySide(request('echo'), request('echo_limited'), Math.ceil(CALLS / 5), 1))
  await app.close()
}

await overHttp('over HTTP, counts in memory, one at a time')

const url = process.env.REDIS_URL ?? 'redis://127.0.0.1:6379'
const client = createRedisClient(url)
if (!await whenReady(client, 2_000)) {
  console.log(`(no Redis at ${url}: the Redis rows are skipped)`)
} else {
  const prefix = `toolgate:bench:${process.pid}:`
  const store = new RedisLimitStore(client, prefix)
  const redis = { plain: invoker(false, store), limited: invoker(true, store) }
  const redisCalls = Math.ceil(CALLS / 10)
  for (const concurrency of [1, CONCURRENCY]) {
    line(`in process, counts in Redis, ${concurrency} at a time`, await sideBySide(
      async () => await redis.plain.invoke({ toolId: 'echo', input }), async () => await redis.limited.invoke({ toolId: 'echo', input }), redisCalls, concurrency))
    // The floor: the same call beside one bare script round trip to the same Redis, and nothing else.
    const floor = async (): Promise<unknown> => {
      await client.eval('return 1', 0)
      return await redis.plain.invoke({ toolId: 'echo', input })
    }
    line(`  floor: no limit + one bare script, ${concurrency} at a time`, await sideBySide(
      async () => await redis.plain.invoke({ toolId: 'echo', input }), floor, redisCalls, concurrency))
  }
  await overHttp('over HTTP, counts in Redis, one at a time', url)
  const keys = await client.keys(`toolgate:bench:${process.pid}:*`)
  if (keys.length > 0) await client.del(...keys)
}
client.disconnect()
