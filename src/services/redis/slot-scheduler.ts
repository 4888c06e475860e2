import { randomBytes } from 'node:crypto'
import type { Redis } from 'ioredis'
import { GatewayError } from '../../core/errors.js'
import { QueueFullError, type Lease, type SlotScheduler, type Ticket } from '../../core/scheduler.js'
import type { ConcurrencyClass } from '../../core/tool.js'
import { SharedHolds } from './shared-holds.js'
import { SLOT_SCRIPT } from './slot-script.js'

export interface RedisSlotOptions {
  /** The command connection (fail-fast, with a command timeout: see `createRedisClient`). */
  readonly redis: Redis
  /** Every key of this scheduler starts with it (one namespace for domains, another for tool limits). */
  readonly namespace: string
  /** A holder or waiter not renewed for this long is gone: the bound on a dead replica's slot. */
  readonly leaseMs: number
  /** How often a waiter asks Redis, besides the wake-up message (which may be lost). */
  readonly pollMs: number
  readonly maxQueuePerDomain: number
  /** A slot this replica held expired before it was released (a partition or outage longer than the lease). */
  readonly onLost?: (domain: string) => void
}

type Reply = [number, number?]
type SlotCommand = (...args: Array<string | number>) => Promise<unknown>

interface Waiter {
  readonly domain: string
  readonly member: string
  readonly grant: (lease: Lease) => void
  readonly refuse: (error: unknown) => void
  readonly queued?: () => void
  state: 'asking' | 'queued' | 'settled'
}

const KIND = { shared: 's', exclusive: 'x', group: 'g' } as const
const SHARED: ConcurrencyClass = { type: 'shared' }

/**
 * The per-domain scheduler (read-only concurrency-safe calls share, any other call runs alone,
 * a `selfConcurrency` group up to its limit, first come first served) shared by every replica on
 * one Redis: each domain's holders, queue and counts live in Redis and change only inside
 * `SLOT_SCRIPT`. A call is admitted, queued or refused by one script run (one round trip); a
 * waiter is woken by a message on its replica's channel, and polls every `pollMs` in case the
 * message was lost.
 * Holders and waiters are leases, renewed while they live: a replica that dies leaves nothing
 * behind for longer than `leaseMs`. Every grant carries a fencing token from one counter.
 */
export class RedisSlotScheduler implements SlotScheduler {
  readonly #options: RedisSlotOptions
  readonly #run: SlotCommand
  readonly #subscriber: Redis
  readonly #replica = randomBytes(6).toString('hex')
  readonly #channel: string
  readonly #waiting = new Map<string, Waiter>()
  /** Slots held here, member -> domain, renewed every third of a lease. */
  readonly #held = new Map<string, string>()
  readonly #timers: NodeJS.Timeout[]
  readonly #holds: SharedHolds
  #sequence = 0
  #queued = 0

  constructor (options: RedisSlotOptions) {
    this.#options = options
    const command = `toolgateSlot${options.namespace.replace(/\W/g, '_')}`
    options.redis.defineCommand(command, { numberOfKeys: 7, lua: SLOT_SCRIPT })
    this.#run = (options.redis as unknown as Record<string, SlotCommand>)[command]!.bind(options.redis)
    this.#channel = `${options.namespace}wake:`
    const renewEvery = Math.max(1, Math.floor(options.leaseMs / 3))
    this.#holds = new SharedHolds(
      (domain, grant, refuse, queued) => this.#request(domain, SHARED, grant, options.maxQueuePerDomain, refuse, queued),
      options.leaseMs, renewEvery, options.maxQueuePerDomain,
    )
    // A subscriber connection must queue its SUBSCRIBE until it is connected, and resubscribes by itself.
    this.#subscriber = options.redis.duplicate({ enableOfflineQueue: true, commandTimeout: undefined })
    this.#subscriber.on('error', () => {})
    this.#subscriber.on('message', (_channel: string, message: string) => { this.#woken(message) })
    void this.#subscriber.subscribe(this.#channel + this.#replica).catch(() => {})
    this.#timers = [
      setInterval(() => { this.#poll() }, options.pollMs),
      setInterval(() => { this.#renew() }, renewEvery),
    ]
    for (const timer of this.#timers) timer.unref()
  }

  /** Synchronous only for a shared call joining this replica's shared slot (see `SharedHolds`). */
  tryStart (domain: string, cls: ConcurrencyClass): Lease | undefined {
    return cls.type === 'shared' ? this.#holds.tryStart(domain) : undefined
  }

  request (domain: string, cls: ConcurrencyClass, grant: (lease: Lease) => void, maxQueue = this.#options.maxQueuePerDomain, refuse: (error: unknown) => void = () => {}): Ticket {
    if (cls.type === 'shared') return this.#holds.request(domain, grant, refuse)
    return this.#request(domain, cls, grant, maxQueue, refuse)
  }

  #request (domain: string, cls: ConcurrencyClass, grant: (lease: Lease) => void, maxQueue: number, refuse: (error: unknown) => void, queued?: () => void): Ticket {
    const member = this.#member(cls)
    const waiter: Waiter = { domain, member, grant, refuse, queued, state: 'asking' }
    this.#waiting.set(member, waiter)
    this.#call('acquire', domain, member, maxQueue).then(reply => {
      if (waiter.state !== 'asking') return
      if (reply[0] === 1) this.#grant(waiter, reply[1]!)
      else if (reply[0] === 2) this.#refuse(waiter, new QueueFullError(domain, maxQueue))
      else { waiter.state = 'queued'; this.#queued++; waiter.queued?.() }
    }, () => {
      if (waiter.state !== 'asking') return
      this.#refuse(waiter, unavailable())
      // A timed-out acquire may still run once Redis answers again (a paused Redis): take it back.
      this.#call('cancel', domain, member).catch(() => {})
    })
    return {
      cancel: () => {
        if (waiter.state === 'settled') return
        this.#settle(waiter)
        // Sent after the acquire on the same connection, so Redis sees it second: it removes
        // the waiter, or releases the slot if it was granted meanwhile.
        this.#call('cancel', domain, member).catch(() => {})
      },
    }
  }

  get queued (): number {
    return this.#queued
  }

  queueLength (domain: string): number {
    let length = 0
    for (const waiter of this.#waiting.values()) if (waiter.domain === domain && waiter.state === 'queued') length++
    return length
  }

  get domainCount (): number {
    return new Set([...this.#held.values(), ...[...this.#waiting.values()].map(waiter => waiter.domain)]).size
  }

  /** Stop renewing; release what this replica holds and refuse what waits here (503). */
  async close (): Promise<void> {
    for (const timer of this.#timers) clearInterval(timer)
    this.#holds.close()
    for (const waiter of [...this.#waiting.values()]) {
      this.#refuse(waiter, new GatewayError('TOOLGATE_UNAVAILABLE', 'the gateway is shutting down', { retryAfter: 1 }))
      this.#call('cancel', waiter.domain, waiter.member).catch(() => {})
    }
    await Promise.allSettled([...this.#held].map(([member, domain]) => this.#call('release', domain, member)))
    this.#held.clear()
    this.#subscriber.disconnect()
  }

  #member (cls: ConcurrencyClass): string {
    const n = ++this.#sequence
    return cls.type === 'group' ? `g|${this.#replica}|${n}|${cls.limit}|${cls.toolId}` : `${KIND[cls.type]}|${this.#replica}|${n}||`
  }

  #call (op: string, domain: string, member: string, maxQueue = 0, ...more: string[]): Promise<Reply> {
    const ns = `${this.#options.namespace}{${domain}}:`
    return this.#run(
      `${ns}h`, `${ns}q`, `${ns}w`, `${ns}c`, `${ns}t`, `${this.#options.namespace}fence`, `${this.#options.namespace}arrival`,
      op, member, this.#options.leaseMs, maxQueue, this.#channel, ...more,
    ) as Promise<Reply>
  }

  #settle (waiter: Waiter): void {
    if (waiter.state === 'queued') this.#queued--
    waiter.state = 'settled'
    this.#waiting.delete(waiter.member)
  }

  #refuse (waiter: Waiter, error: unknown): void {
    this.#settle(waiter)
    waiter.refuse(error)
  }

  #grant (waiter: Waiter, fencingToken: number): void {
    this.#settle(waiter)
    const { domain, member } = waiter
    this.#held.set(member, domain)
    waiter.grant({
      fencingToken,
      release: () => {
        if (!this.#held.delete(member)) return
        // Not awaited: the caller's answer does not wait for it. Lost (Redis down), the lease expires.
        this.#call('release', domain, member).catch(() => {})
      },
    })
  }

  /** A wake-up message: `member token`, or `drain member` for a shared slot held here. */
  #woken (message: string): void {
    const [member, token] = message.split(' ')
    if (member === 'drain') {
      const domain = this.#held.get(token!)
      if (domain !== undefined) this.#holds.drain(domain)
      return
    }
    const waiter = this.#waiting.get(member!)
    if (waiter !== undefined && waiter.state !== 'settled') this.#grant(waiter, Number(token))
  }

  /** Waiters renew their place and learn of grants whose message was lost; a gone one is refused. */
  #poll (): void {
    for (const waiter of this.#waiting.values()) {
      if (waiter.state !== 'queued') continue
      this.#call('poll', waiter.domain, waiter.member).then(reply => {
        if (waiter.state !== 'queued') return
        if (reply[0] === 1) this.#grant(waiter, reply[1]!)
        else if (reply[0] === 3) this.#refuse(waiter, unavailable())
      }, () => {}) // Redis unreachable: keep waiting; the queue timeout bounds it.
    }
  }

  #renew (): void {
    const byDomain = new Map<string, string[]>()
    for (const [member, domain] of this.#held) byDomain.set(domain, [...(byDomain.get(domain) ?? []), member])
    for (const [domain, members] of byDomain) {
      const sentAt = performance.now()
      this.#call('renew', domain, members[0]!, 0, ...members.slice(1)).then(reply => {
        const [waiting, ...lost] = reply as unknown as [number, ...string[]]
        for (const member of lost) {
          if (!this.#held.delete(member)) continue
          this.#holds.lost(domain)
          this.#options.onLost?.(domain)
        }
        this.#holds.renewed(domain, sentAt, waiting > 0)
      }, () => {})
    }
  }
}

function unavailable (): GatewayError {
  return new GatewayError('TOOLGATE_STORE_UNAVAILABLE', 'the shared concurrency store cannot be reached', { retryAfter: 1 })
}
