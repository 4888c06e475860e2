import { Redis } from 'ioredis'
import { afterAll, describe, expect, it } from 'vitest'
import { violations, type Ran } from './intervals.js'
import { cleanPrefix, HAVE_REDIS, REDIS_URL, testPrefix } from './redis-env.js'
import { post, startReplicaProcess, stopReplicaProcess, type ReplicaProcess } from './replica-processes.js'

/*
 * Two real gateway processes, one session hammered from both sides with a mix of exclusive,
 * shared and selfConcurrency calls: no overlap the contract forbids, no lost call (every one
 * answers 200), and no slot left behind in Redis at the end.
 */

const SOAK_MS = Number(process.env.SOAK_MS ?? 8_000)
const PER_SIDE = 6
const TOOLS = ['slot_exclusive', 'slot_read', 'slot_pair'] as const
const prefix = testPrefix()
const started: ReplicaProcess[] = []
afterAll(async () => {
  await Promise.all(started.map(stopReplicaProcess))
  if (HAVE_REDIS) await cleanPrefix(prefix)
})

describe.skipIf(!HAVE_REDIS)('two-replica soak of one session', () => {
  it('no overlap, no lost call, no stuck slot', async () => {
    const replicas = await Promise.all([0, 1].map(() => startReplicaProcess({ REDIS_URL, REDIS_PREFIX: prefix })))
    started.push(...replicas)
    const ran: Ran[] = []
    const failed: string[] = []
    let sent = 0
    const until = Date.now() + SOAK_MS
    await Promise.all(replicas.flatMap(({ address }) => Array.from({ length: PER_SIDE }, async (_, worker) => {
      for (let i = worker; Date.now() < until; i++) {
        const tool = TOOLS[i % TOOLS.length]!
        sent++
        const { status, body } = await post(address, tool, i % 4)
        if (status === 200) ran.push({ tool, start: body.start, end: body.end, token: body.token })
        else failed.push(`${tool}: ${status} ${body.code}`)
      }
    })))
    expect(failed).toEqual([])
    expect(ran.length).toBe(sent)
    expect(ran.length).toBeGreaterThan(100)
    expect(violations(ran)).toEqual([])
    // One token per grant: reads that joined their replica's shared slot share its token, the rest have their own.
    const writes = ran.filter(r => r.tool !== 'slot_read')
    expect(new Set(writes.map(r => r.token)).size).toBe(writes.length)
    const redis = new Redis(REDIS_URL)
    try {
      // Holders, queue, waiters, counts and tokens of the session are all gone: nothing stuck.
      expect(await redis.keys(`${prefix}slots:d:{one-session}:*`)).toEqual([])
    } finally {
      redis.disconnect()
    }
    const last = await post(replicas[0]!.address, 'slot_exclusive', 0)
    expect(last.status).toBe(200)
    console.log(`[soak] ${ran.length} calls in ${SOAK_MS} ms over 2 replicas, none overlapping where forbidden`)
  }, SOAK_MS + 30_000)
})
