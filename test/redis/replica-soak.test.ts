import { Redis } from 'ioredis'
import { afterAll, describe, expect, it } from 'vitest'
import { SLOW } from '../slow.js'
import { violations, type Ran } from './intervals.js'
import { cleanPrefix, HAVE_REDIS, REDIS_URL, testPrefix } from './redis-env.js'
import { post, startReplicaProcess, stopReplicaProcess, type ReplicaProcess } from './replica-processes.js'
import { domainOf } from '../../src/services/principal-keys.js'

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
    const redis = new Redis(REDIS_URL)
    const sessionKeys = (): Promise<string[]> => redis.keys(`${prefix}slots:d:{${domainOf('tester', 'one-session')}}:*`)
    let seenKeys = 0
    const sampler = (async () => {
      while (Date.now() < until) {
        seenKeys = Math.max(seenKeys, (await sessionKeys()).length)
        await new Promise(resolve => setTimeout(resolve, 200))
      }
    })()
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
    await sampler
    try {
      expect(seenKeys).toBeGreaterThan(0) // the session's state was where we look for leftovers
      const last = await post(replicas[0]!.address, 'slot_exclusive', 0)
      expect(last.status).toBe(200)
      // Holders, queue, waiters, counts and tokens of the session all go once idle shared slots
      // have lingered (a third of a lease, checked at a renewal): within one lease, nothing stuck.
      const deadline = Date.now() + 5_000
      while ((await sessionKeys()).length > 0 && Date.now() < deadline) await new Promise(resolve => setTimeout(resolve, 100))
      expect(await sessionKeys()).toEqual([])
    } finally {
      redis.disconnect()
    }
    console.log(`[soak] ${ran.length} calls in ${SOAK_MS} ms over 2 replicas, none overlapping where forbidden`)
  }, SOAK_MS + SLOW.PROCESS_MS)
})
