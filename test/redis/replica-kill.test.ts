import { setTimeout as sleep } from 'node:timers/promises'
import { afterEach, describe, expect, it } from 'vitest'
import { SLOW } from '../slow.js'
import { HAVE_REDIS_SERVER, PrivateRedis } from './private-redis.js'
import { post, startReplicaProcess, stopReplicaProcess, type ReplicaProcess } from './replica-processes.js'
import { untilHeld } from './slot-http.js'

/* Real gateway processes on a Redis of the test's own; one of them is killed with SIGKILL mid-call. */

const LEASE_MS = 1_000
const started: ReplicaProcess[] = []
const servers: PrivateRedis[] = []
afterEach(async () => {
  await Promise.all(started.splice(0).map(stopReplicaProcess))
  await Promise.all(servers.splice(0).map(redis => redis.stop()))
})

describe.skipIf(!HAVE_REDIS_SERVER)('a replica killed while it holds an exclusive slot', () => {
  it('its waiters on the other replica proceed within the lease (SLOT_LEASE_MS), not when the dead call would have ended', async () => {
    const redis = await PrivateRedis.start()
    servers.push(redis)
    const env = { REDIS_URL: redis.url, SLOT_LEASE_MS: String(LEASE_MS) }
    const [doomed, survivor] = await Promise.all([startReplicaProcess(env), startReplicaProcess(env)])
    started.push(doomed, survivor)
    const holding = post(doomed.address, 'slot_exclusive', 30_000).catch(() => undefined) // never answers: its process dies
    await untilHeld(redis.url, 'toolgate:', 'tester') // the doomed replica holds the slot (the default prefix)
    const waiting = post(survivor.address, 'slot_exclusive', 0)
    await sleep(300)
    expect(await Promise.race([waiting.then(() => 'answered'), sleep(200).then(() => 'waiting')])).toBe('waiting')
    const killedAt = Date.now()
    doomed.child.kill('SIGKILL')
    const answer = await waiting
    const waited = Date.now() - killedAt
    expect(answer.status).toBe(200)
    expect(answer.body.pid).toBe(survivor.child.pid)
    // The lease, plus at most one renewal period already used and one poll interval, plus 2 s for
    // a loaded machine (two gateway processes and Redis on two busy cores): far below the 30 s
    // the dead call would have held it.
    expect(waited).toBeLessThan(LEASE_MS + LEASE_MS / 3 + 500 + 500 + 2_000)
    expect(await holding).toBeUndefined()
  }, SLOW.PROCESS_MS)
})
