import { describe, expect, it } from 'vitest'
import { QueueFullError, Scheduler, type Lease } from '../../src/core/scheduler.js'
import { EXCLUSIVE, GROUP_A, SHARED } from './scheduler-model.js'

const scheduler = (maxQueuePerDomain = 8) => new Scheduler({ maxQueuePerDomain })

/** Request a slot and report the lease when it was granted at once. */
function requestNow (s: Scheduler, domain: string, cls = EXCLUSIVE): Lease | undefined {
  let lease: Lease | undefined
  s.request(domain, cls, granted => { lease = granted })
  return lease
}

describe('Scheduler, by example', () => {
  it('runs two shared calls that arrive to an idle domain side by side', () => {
    const s = scheduler()
    expect([requestNow(s, 'd', SHARED), requestNow(s, 'd', SHARED)].every(lease => lease !== undefined)).toBe(true)
  })

  it('makes an exclusive call wait for a shared one, and start when it ends', () => {
    const s = scheduler()
    const shared = requestNow(s, 'd', SHARED)!
    let started = false
    s.request('d', EXCLUSIVE, () => { started = true })
    expect(started).toBe(false)
    shared.release()
    expect(started).toBe(true)
  })

  it('makes a shared call that arrives after a waiting exclusive one wait too', () => {
    const s = scheduler()
    requestNow(s, 'd', SHARED)
    s.request('d', EXCLUSIVE, () => {})
    expect(requestNow(s, 'd', SHARED)).toBeUndefined()
    expect(s.queueLength('d')).toBe(2)
  })

  it('runs a group up to its limit, then queues', () => {
    const s = scheduler()
    const granted = [1, 2, 3].map(() => requestNow(s, 'd', GROUP_A))
    expect(granted.map(lease => lease !== undefined)).toEqual([true, true, false])
  })

  it('lets another domain run while one is full', () => {
    const s = scheduler(0)
    requestNow(s, 'busy')
    expect(() => requestNow(s, 'busy')).toThrow(QueueFullError)
    expect(requestNow(s, 'idle')).toBeDefined()
  })

  it('names the domain and the limit in QueueFullError', () => {
    const s = scheduler(1)
    requestNow(s, 'session-9')
    requestNow(s, 'session-9')
    expect(() => requestNow(s, 'session-9')).toThrow(expect.objectContaining({ domain: 'session-9', limit: 1 }))
  })

  it('ignores a second release of the same lease', () => {
    const s = scheduler()
    const first = requestNow(s, 'd')!
    const granted: Lease[] = []
    s.request('d', EXCLUSIVE, lease => granted.push(lease))
    first.release()
    first.release()
    expect(requestNow(s, 'd')).toBeUndefined()
    expect(granted).toHaveLength(1)
  })

  it('ignores a cancel of a ticket that was already granted', () => {
    const s = scheduler()
    const first = requestNow(s, 'd')!
    const ticket = s.request('d', EXCLUSIVE, () => {})
    s.request('d', EXCLUSIVE, () => {})
    first.release()
    ticket.cancel()
    expect(s.queueLength('d')).toBe(1)
  })

  it('resolves acquire() with a lease, and rejects it when the queue is full', async () => {
    const s = scheduler(0)
    const lease = await s.acquire('d', EXCLUSIVE)
    await expect(s.acquire('d', EXCLUSIVE)).rejects.toBeInstanceOf(QueueFullError)
    lease.release()
    expect(s.domainCount).toBe(0)
  })
})

describe('Scheduler memory', () => {
  it('leaves no domain behind after 100k one-off domains held together, then released', () => {
    const s = scheduler()
    const leases: Lease[] = []
    for (let i = 0; i < 100_000; i++) leases.push(requestNow(s, `session-${i}`)!)
    expect(s.domainCount).toBe(100_000)
    for (const lease of leases) lease.release()
    expect(s.domainCount).toBe(0)
    expect(s.heldDomains).toBe(1)
  })

  it('leaves no domain behind after 100k one-off domains released at once', () => {
    const s = scheduler()
    for (let i = 0; i < 100_000; i++) s.request(`session-${i}`, SHARED, lease => { lease.release() })
    expect(s.domainCount).toBe(0)
    expect(s.heldDomains).toBe(1)
  })

  it('keeps a busy caller\'s domain between calls and drops it once another domain goes idle', () => {
    const s = scheduler()
    requestNow(s, 'busy')!.release()
    requestNow(s, 'busy')!.release()
    expect(s.heldDomains).toBe(1)
    const other = requestNow(s, 'other')!
    expect(s.heldDomains).toBe(2)
    other.release()
    expect(s.heldDomains).toBe(1)
    expect(s.domainCount).toBe(0)
  })

  it('forgets a domain whose only queued call was cancelled after the runner left', () => {
    const s = scheduler()
    const running = requestNow(s, 'd')!
    const queued = s.request('d', EXCLUSIVE, () => { throw new Error('must not start') })
    queued.cancel()
    running.release()
    expect(s.domainCount).toBe(0)
  })
})
