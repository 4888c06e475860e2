import type { ConcurrencyClass } from './tool.js'

/** Held by a running call; releasing twice is harmless. */
export interface Lease {
  release (): void
  /** The slot's fencing token, when the scheduler issues them (the Redis one does). */
  readonly fencingToken?: number
}

/** A queued request: cancel it to leave the queue without ever starting. */
export interface Ticket {
  cancel (): void
}

export interface SchedulerOptions {
  /** Calls that may wait in one domain; one more is refused with `QueueFullError`. */
  readonly maxQueuePerDomain: number
}

export class QueueFullError extends Error {
  constructor (readonly domain: string, readonly limit: number) {
    super(`the queue of concurrency domain "${domain}" holds ${limit} calls already`)
    this.name = 'QueueFullError'
  }
}

interface Waiter {
  readonly cls: ConcurrencyClass
  readonly grant: (lease: Lease) => void
  cancelled: boolean
}

/** What runs in one domain now, and who waits, first come first served. */
class Domain {
  shared = 0
  exclusive = false
  group: string | null = null
  groupCount = 0
  readonly queue: Waiter[] = []

  canStart (cls: ConcurrencyClass): boolean {
    if (this.exclusive) return false
    switch (cls.type) {
      case 'shared': return this.group === null
      case 'exclusive': return this.shared === 0 && this.group === null
      case 'group': return this.shared === 0 && (this.group === null || (this.group === cls.toolId && this.groupCount < cls.limit))
    }
  }

  occupy (cls: ConcurrencyClass): void {
    if (cls.type === 'shared') this.shared++
    else if (cls.type === 'exclusive') this.exclusive = true
    else { this.group = cls.toolId; this.groupCount++ }
  }

  vacate (cls: ConcurrencyClass): void {
    if (cls.type === 'shared') this.shared--
    else if (cls.type === 'exclusive') this.exclusive = false
    else if (--this.groupCount === 0) this.group = null
  }

  get idle (): boolean {
    return this.shared === 0 && !this.exclusive && this.group === null && this.queue.length === 0
  }
}

/**
 * The per-domain scheduler. Inside a domain (the session id, else the principal), read-only
 * concurrency-safe calls share; any other call runs alone; a `selfConcurrency` group runs up to
 * its limit of its own calls. Admission is strictly in arrival order: a call that cannot start
 * yet blocks those behind it, which is what guarantees that nothing starves. Idle domains are
 * deleted, so a million one-off sessions leave nothing behind; only the most recently idle one
 * is kept for its next call, since a busy caller's domain empties and refills on every call.
 */
export class Scheduler implements SlotScheduler {
  readonly #domains = new Map<string, Domain>()
  readonly #options: SchedulerOptions
  #queued = 0
  /** The one idle domain kept (see the class comment); every other idle domain is deleted. */
  #keptIdle: string | undefined

  constructor (options: SchedulerOptions) {
    this.#options = options
  }

  /**
   * Ask for a slot. `grant` is called synchronously when the slot is free now, else later in
   * arrival order. Throws `QueueFullError` when the domain's queue is at its bound.
   */
  request (domainKey: string, cls: ConcurrencyClass, grant: (lease: Lease) => void, maxQueue = this.#options.maxQueuePerDomain): Ticket {
    const now = this.tryStart(domainKey, cls)
    if (now !== undefined) {
      grant(now)
      return NOOP_TICKET
    }
    const domain = this.#domains.get(domainKey)!
    if (domain.queue.length >= maxQueue) throw new QueueFullError(domainKey, maxQueue)
    const waiter: Waiter = { cls, grant, cancelled: false }
    domain.queue.push(waiter)
    this.#queued++
    const owner = domain
    return {
      cancel: () => {
        if (waiter.cancelled) return
        waiter.cancelled = true
        const index = owner.queue.indexOf(waiter)
        if (index === -1) return
        owner.queue.splice(index, 1)
        this.#queued--
        // The head may have been what blocked the others.
        if (index === 0) this.#pump(domainKey, owner)
        else this.#forgetIfIdle(domainKey, owner)
      },
    }
  }

  /**
   * The slot, when it is free now and nobody waits for it; `undefined` when the call would
   * have to queue (then `request` queues it). The common case, without a callback.
   */
  tryStart (domainKey: string, cls: ConcurrencyClass): Lease | undefined {
    let domain = this.#domains.get(domainKey)
    if (domain === undefined) {
      domain = new Domain()
      this.#domains.set(domainKey, domain)
    }
    if (domain.queue.length === 0 && domain.canStart(cls)) return this.#lease(domainKey, domain, cls)
    return undefined
  }

  /** Promise form of `request`, for callers that do not need the synchronous fast path. */
  acquire (domainKey: string, cls: ConcurrencyClass): Promise<Lease> {
    return new Promise((resolve, reject) => {
      try {
        this.request(domainKey, cls, resolve)
      } catch (error) {
        reject(error)
      }
    })
  }

  /** Domains with running or queued calls (the one idle domain kept for reuse is not counted). */
  get domainCount (): number {
    const kept = this.#keptIdle === undefined ? undefined : this.#domains.get(this.#keptIdle)
    return this.#domains.size - (kept?.idle === true ? 1 : 0)
  }

  /** Domains in memory: those with calls, and at most one idle domain kept for reuse. */
  get heldDomains (): number {
    return this.#domains.size
  }

  /** Calls waiting for a slot, over all domains (a gauge for metrics). */
  get queued (): number {
    return this.#queued
  }

  queueLength (domainKey: string): number {
    return this.#domains.get(domainKey)?.queue.length ?? 0
  }

  #lease (domainKey: string, domain: Domain, cls: ConcurrencyClass): Lease {
    domain.occupy(cls)
    let held = true
    return {
      release: () => {
        if (!held) return
        held = false
        domain.vacate(cls)
        this.#pump(domainKey, domain)
      },
    }
  }

  #pump (domainKey: string, domain: Domain): void {
    while (domain.queue.length > 0 && domain.canStart(domain.queue[0]!.cls)) {
      const waiter = domain.queue.shift()!
      this.#queued--
      waiter.cancelled = true // granted: a late cancel must not touch the queue
      waiter.grant(this.#lease(domainKey, domain, waiter.cls))
    }
    this.#forgetIfIdle(domainKey, domain)
  }

  #forgetIfIdle (domainKey: string, domain: Domain): void {
    if (!domain.idle || this.#keptIdle === domainKey || this.#domains.get(domainKey) !== domain) return
    const previous = this.#keptIdle
    if (previous !== undefined && this.#domains.get(previous)?.idle === true) this.#domains.delete(previous)
    this.#keptIdle = domainKey
  }
}

/**
 * What the pipeline needs of a scheduler. The in-process `Scheduler` is one; a scheduler shared
 * by replicas (the gateway's Redis one) is another, and may only learn asynchronously that a
 * call must be refused: it reports that through `refuse` instead of throwing.
 */
export interface SlotScheduler {
  tryStart (domainKey: string, cls: ConcurrencyClass): Lease | undefined
  request (domainKey: string, cls: ConcurrencyClass, grant: (lease: Lease) => void, maxQueue?: number, refuse?: (error: unknown) => void): Ticket
  /** Calls waiting for a slot in this process (a gauge for metrics). */
  readonly queued: number
  /** Calls of this process waiting in one domain. */
  queueLength (domainKey: string): number
  /** Domains this process has calls running or waiting in. */
  readonly domainCount: number
}

const NOOP_TICKET: Ticket = { cancel () {} }
