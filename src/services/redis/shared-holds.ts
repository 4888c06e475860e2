import { QueueFullError, type Lease, type Ticket } from '../../core/scheduler.js'

/** One shared slot in Redis that this replica's read-only concurrency-safe calls of a domain share. */
interface Hold {
  readonly domain: string
  state: 'asking' | 'held' | 'ended'
  /** Local calls running under it. */
  count: number
  lease?: Lease
  fencingToken?: number
  /** Local clock: before this, Redis cannot have expired the slot (see `#valid`). */
  validUntil: number
  sentAt: number
  idleSince: number
  joiners: Array<{ grant: (lease: Lease) => void, refuse: (error: unknown) => void }>
  ticket?: Ticket
  /** Redis queued the request: its joiners are waiting calls, bounded like a queue. */
  queued: boolean
}

type Ask = (domain: string, grant: (lease: Lease) => void, refuse: (error: unknown) => void, queued: () => void) => Ticket

/**
 * Read-only concurrency-safe calls without a Redis round trip each. The first one of a domain
 * takes one shared slot in Redis for this replica (one round trip; calls arriving meanwhile
 * wait for the same answer), later ones join it in memory while it is valid. Why that is safe:
 * while the slot is in Redis no call that may not run beside a shared one can be granted in
 * the domain, on any replica; and the slot is only used while it is certainly still there:
 * its lease is counted from when the request that set or renewed it was sent, which is before
 * Redis started its own count. Why nothing starves: as soon as a call queues behind the slot,
 * Redis tells this replica (`drain`, with the renewal as backstop); from then on new shared
 * calls queue in Redis like any other, and the slot is released when its calls end. An idle
 * slot is kept for `lingerMs`, then released.
 */
export class SharedHolds {
  readonly #current = new Map<string, Hold>()
  readonly #ask: Ask
  readonly #leaseMs: number
  readonly #lingerMs: number
  readonly #maxQueue: number

  constructor (ask: Ask, leaseMs: number, lingerMs: number, maxQueue: number) {
    this.#ask = ask
    this.#leaseMs = leaseMs
    this.#lingerMs = lingerMs
    this.#maxQueue = maxQueue
  }

  /** A slot now, under this replica's valid shared slot in the domain, or `undefined`. */
  tryStart (domain: string): Lease | undefined {
    const hold = this.#current.get(domain)
    return hold !== undefined && this.#valid(hold) ? this.#join(hold) : undefined
  }

  request (domain: string, grant: (lease: Lease) => void, refuse: (error: unknown) => void): Ticket {
    let hold = this.#current.get(domain)
    if (hold?.state === 'held') {
      if (this.#valid(hold)) {
        grant(this.#join(hold))
        return { cancel () {} }
      }
      this.#retire(hold) // no longer certainly in Redis: ask again
      hold = undefined
    }
    if (hold === undefined) hold = this.#open(domain)
    // The request waits in Redis as one entry; the calls behind it are bounded here, per replica.
    if (hold.queued && hold.joiners.length >= this.#maxQueue) {
      refuse(new QueueFullError(domain, this.#maxQueue))
      return { cancel () {} }
    }
    const joiner = { grant, refuse }
    hold.joiners.push(joiner)
    const asking = hold
    return {
      cancel: () => {
        const index = asking.joiners.indexOf(joiner)
        if (index === -1) return
        asking.joiners.splice(index, 1)
        if (asking.state === 'asking' && asking.joiners.length === 0) {
          asking.state = 'ended'
          this.#detach(asking)
          asking.ticket?.cancel()
        }
      },
    }
  }

  /** A call waits behind this replica's shared slot in `domain`: admit no more under it. */
  drain (domain: string): void {
    const hold = this.#current.get(domain)
    if (hold?.state === 'held') this.#retire(hold)
  }

  /** A renewal sent at `sentAt` reached Redis; `waiting`: calls queue in the domain. */
  renewed (domain: string, sentAt: number, waiting: boolean): void {
    const hold = this.#current.get(domain)
    if (hold?.state !== 'held') return
    hold.validUntil = Math.max(hold.validUntil, sentAt + this.#leaseMs * 0.8)
    if (waiting) this.drain(domain)
    else if (hold.count === 0 && performance.now() - hold.idleSince > this.#lingerMs) this.#end(hold)
  }

  /** Redis lost the slot (its lease ran out): stop using it. */
  lost (domain: string): void {
    const hold = this.#current.get(domain)
    if (hold === undefined) return
    hold.validUntil = 0
    this.#retire(hold)
  }

  /** Release every idle slot (shutdown). */
  close (): void {
    for (const hold of [...this.#current.values()]) this.#retire(hold)
  }

  #open (domain: string): Hold {
    const hold: Hold = { domain, state: 'asking', count: 0, validUntil: 0, sentAt: performance.now(), idleSince: 0, joiners: [], queued: false }
    this.#current.set(domain, hold)
    hold.ticket = this.#ask(domain, lease => { this.#granted(hold, lease) }, error => {
      hold.state = 'ended'
      this.#detach(hold)
      for (const joiner of hold.joiners.splice(0)) joiner.refuse(error)
    }, () => { hold.queued = true })
    return hold
  }

  #granted (hold: Hold, lease: Lease): void {
    if (hold.state !== 'asking') { lease.release(); return }
    hold.state = 'held'
    hold.lease = lease
    hold.fencingToken = lease.fencingToken
    // Redis started the lease when it ran the script, after we sent it: counting from sentAt is conservative.
    hold.validUntil = hold.sentAt + this.#leaseMs * 0.8
    hold.idleSince = performance.now()
    for (const joiner of hold.joiners.splice(0)) joiner.grant(this.#join(hold))
  }

  #join (hold: Hold): Lease {
    hold.count++
    let held = true
    return {
      fencingToken: hold.fencingToken,
      release: () => {
        if (!held) return
        held = false
        if (--hold.count > 0) return
        hold.idleSince = performance.now()
        if (this.#current.get(hold.domain) !== hold) this.#end(hold) // draining or lost: let it go now
      },
    }
  }

  #valid (hold: Hold): boolean {
    return hold.state === 'held' && performance.now() < hold.validUntil
  }

  #detach (hold: Hold): void {
    if (this.#current.get(hold.domain) === hold) this.#current.delete(hold.domain)
  }

  /** No new calls join it; it is released now if idle, else when its last call ends. */
  #retire (hold: Hold): void {
    this.#detach(hold)
    if (hold.count === 0) this.#end(hold)
  }

  #end (hold: Hold): void {
    this.#detach(hold)
    if (hold.state !== 'held') return
    hold.state = 'ended'
    hold.lease!.release()
  }
}
