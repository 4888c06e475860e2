import { createHash } from 'node:crypto'
import { UpstreamError } from '../../../core/errors.js'
import { credentialWaitMs, type UpstreamCredential } from '../credentials/credential.js'
import type { StdioServerConfig } from '../file.js'
import type { UpstreamLog } from '../status.js'
import { UpstreamConnection, type ConnectionOptions, type UpstreamCall } from './connection.js'

/*
 * A stdio server that takes a person's token from its environment runs once per person: a
 * child started on their first call with their own token (exchanged or linked) in the declared
 * variable, kept while they use it, stopped when idle. A child never serves anyone else, and
 * a refreshed token starts a new child (the old one finishes its calls and idles out). The
 * number of children is bounded: the least recently used idle one makes room, and when none is
 * idle the call answers 503. The server's tools are listed by the one child started with the
 * file's own environment, which serves no call.
 */

interface Child {
  readonly connection: UpstreamConnection
  readonly key: string
  readonly principal: string
  readonly started: Promise<void>
  inFlight: number
  lastUsed: number
  timer: NodeJS.Timeout | undefined
}

export class PersonalChildren {
  readonly #config: StdioServerConfig
  readonly #credential: UpstreamCredential
  readonly #options: ConnectionOptions
  readonly #children = new Map<string, Child>()
  readonly #log: UpstreamLog
  #closed = false

  constructor (config: StdioServerConfig, credential: UpstreamCredential, options: ConnectionOptions) {
    this.#config = config
    this.#credential = credential
    this.#options = options
    this.#log = options.log
  }

  /** Children running now, by person: what `GET /upstreams` counts. */
  get size (): number {
    return this.#children.size
  }

  /** Run `send` on the child of the call's principal, started for them if need be. */
  async run<T> (call: UpstreamCall, send: (connection: UpstreamConnection) => Promise<T>): Promise<T> {
    const principal = call.principal
    if (principal === undefined) throw new UpstreamError('TOOLGATE_UPSTREAM_UNAVAILABLE', `upstream "${this.#config.name}" runs a child per person, and this call has none`, { retryAfter: 1, upstream: this.#config.name })
    const applied = await this.#credential.apply(principal, credentialWaitMs(call.timeoutMs ?? this.#options.toolTimeoutMs ?? 30_000))
    const token = (applied.headers.authorization ?? '').replace(/^Bearer /, '')
    // One child per person and token: a refreshed token is a new child, never another person's.
    const key = `${principal.id}\n${createHash('sha256').update(token).digest('base64url')}`
    const child = this.#children.get(key) ?? this.#start(key, principal.id, token)
    child.inFlight++
    child.lastUsed = Date.now()
    clearTimeout(child.timer)
    try {
      await child.started
      return await send(child.connection)
    } finally {
      child.inFlight--
      child.lastUsed = Date.now()
      if (child.inFlight === 0) this.#idle(child)
    }
  }

  #start (key: string, principal: string, token: string): Child {
    if (this.#closed) throw new UpstreamError('TOOLGATE_UPSTREAM_UNAVAILABLE', `upstream "${this.#config.name}" is closing`, { retryAfter: 1, upstream: this.#config.name })
    const perPerson = this.#config.perPerson!
    if (this.#children.size >= perPerson.maxChildren) this.#evict()
    const config: StdioServerConfig = { ...this.#config, env: { ...this.#config.env, [perPerson.env]: token }, secrets: [...this.#config.secrets, token] }
    const connection = new UpstreamConnection(config, { ...this.#options, onTools: () => undefined, onFeatures: () => undefined, onState: undefined, onRestart: undefined })
    const child: Child = { connection, key, principal, inFlight: 0, lastUsed: Date.now(), timer: undefined, started: connection.start() }
    this.#children.set(key, child)
    this.#log.info({ upstream: this.#config.name, principal, children: this.#children.size }, 'started a child of an upstream for one person')
    return child
  }

  /** Room for one more: the least recently used idle child is stopped; none idle, the call waits for nothing: 503. */
  #evict (): void {
    let oldest: Child | undefined
    for (const child of this.#children.values()) if (child.inFlight === 0 && (oldest === undefined || child.lastUsed < oldest.lastUsed)) oldest = child
    if (oldest === undefined) {
      throw new UpstreamError('TOOLGATE_UPSTREAM_UNAVAILABLE', `upstream "${this.#config.name}" runs ${this.#config.perPerson!.maxChildren} children for people already, all busy; retry after 1 s`, { retryAfter: 1, upstream: this.#config.name })
    }
    this.#stop(oldest, 'to make room')
  }

  #idle (child: Child): void {
    child.timer = setTimeout(() => { if (child.inFlight === 0) this.#stop(child, 'idle') }, this.#config.perPerson!.idleMs)
    child.timer.unref()
  }

  #stop (child: Child, why: string): void {
    if (this.#children.get(child.key) !== child) return
    this.#children.delete(child.key)
    clearTimeout(child.timer)
    this.#log.info({ upstream: this.#config.name, principal: child.principal, why }, 'stopped a child of an upstream for one person')
    void child.connection.close()
  }

  async close (): Promise<void> {
    this.#closed = true
    const children = [...this.#children.values()]
    this.#children.clear()
    await Promise.all(children.map(async child => {
      clearTimeout(child.timer)
      await child.connection.close()
    }))
  }
}
