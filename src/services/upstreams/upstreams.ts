import type { Tool as McpToolInfo } from '@modelcontextprotocol/client'
import type { GatewayApp } from '../../core/app-context.js'
import { defineTool } from '../../core/define-tool.js'
import type { AnyTool } from '../../core/tool.js'
import { ConfigError } from '../config.js'
import { CounterFamily, GaugeFamily } from '../metrics/families.js'
import { UpstreamConnection, type UpstreamLog, type UpstreamStatus } from './connection.js'
import { declarationOf, operatorFor } from './declarations.js'
import { readUpstreamsFile, type UpstreamsFile } from './file.js'
import { idPartOf, upstreamToolId } from './names.js'

/*
 * Every upstream of the upstreams file, owned by one object: it starts them (children and
 * connections), turns each server's tool list into declarations, tells the gateway when a list
 * changes, and stops them all. Nothing else starts or stops an upstream.
 */

export interface UpstreamsOptions {
  readonly log: UpstreamLog
  readonly maxMessageBytes: number
  /** How long each server's first connection may take at start-up. */
  readonly connectTimeoutMs?: number
  readonly backoff?: { readonly initialMs: number, readonly maxMs: number }
}

type Tools = readonly AnyTool<GatewayApp>[]

export class Upstreams {
  readonly file: UpstreamsFile
  readonly #connections: UpstreamConnection[]
  readonly #tools = new Map<string, Tools>()
  /** One defined tool per upstream tool as last listed: an unchanged tool keeps its declaration. */
  readonly #defined = new Map<string, { readonly key: string, readonly tool: AnyTool<GatewayApp> }>()
  readonly #listeners = new Set<(server: string) => void>()
  /** Why a server's tools could not be declared, kept for start-up to throw. */
  readonly #pending = new Map<string, Error>()
  readonly #up: GaugeFamily
  readonly #restarts: CounterFamily
  readonly #log: UpstreamLog
  #started = false

  constructor (file: UpstreamsFile, options: UpstreamsOptions) {
    this.file = file
    this.#log = options.log
    this.#up = new GaugeFamily('toolgate_upstream_up', 'Whether an upstream MCP server is connected (1) or not (0), by upstream')
    this.#restarts = new CounterFamily('toolgate_upstream_restarts_total', 'Restarts of an upstream\'s process or reconnections to it after the first connection, by upstream')
    this.#connections = file.servers.map(server => {
      const up = this.#up.child({ upstream: server.name })
      const restarts = this.#restarts.child({ upstream: server.name })
      return new UpstreamConnection(server, {
        log: options.log,
        maxMessageBytes: options.maxMessageBytes,
        connectTimeoutMs: options.connectTimeoutMs,
        backoff: options.backoff,
        onState: state => { up.set(state === 'up' ? 1 : 0) },
        onRestart: () => { restarts.inc() },
        onTools: tools => { this.#listed(server.name, tools) },
      })
    })
  }

  /** The metric families, for the gateway's `/metrics`. */
  get families (): ReadonlyArray<GaugeFamily | CounterFamily> {
    return [this.#up, this.#restarts]
  }

  /**
   * Start every server and wait for each one's first attempt. A server that is down then keeps
   * being retried; its tools join the catalog when it comes up. A tool that cannot be declared
   * (an id collision, an operator rule that does not compile) stops start-up, naming it.
   */
  async start (): Promise<void> {
    await Promise.all(this.#connections.map(async connection => { await connection.start() }))
    this.#started = true
    for (const connection of this.#connections) {
      const tools = this.#tools.get(connection.config.name)
      if (tools === undefined && connection.state === 'up') throw this.#pending.get(connection.config.name) ?? new Error(`upstream "${connection.config.name}": no tools`)
    }
    this.#checkOperatorIds()
  }

  /** Every upstream tool serving now, server by server in file order. */
  tools (): Tools {
    return this.#connections.flatMap(connection => this.#tools.get(connection.config.name) ?? [])
  }

  /** Called with the server's name when its tools change (after start-up). */
  onChange (listener: (server: string) => void): () => void {
    this.#listeners.add(listener)
    return () => { this.#listeners.delete(listener) }
  }

  status (): UpstreamStatus[] {
    return this.#connections.map(connection => connection.status())
  }

  /** Up, for every server the file marks `required`. */
  ready (): boolean {
    return this.#connections.every(connection => !connection.config.required || connection.state === 'up')
  }

  async close (): Promise<void> {
    await Promise.all(this.#connections.map(async connection => { await connection.close() }))
  }

  #listed (server: string, listed: readonly McpToolInfo[]): void {
    let tools: Tools
    try {
      tools = this.#declare(server, listed)
    } catch (error) {
      if (!this.#started) {
        this.#pending.set(server, error as Error)
        return
      }
      this.#log.error({ upstream: server, err: error }, 'the tools of this upstream changed, but they cannot be declared; keeping the tools it had')
      return
    }
    this.#pending.delete(server)
    this.#tools.set(server, tools)
    if (this.#started) for (const listener of this.#listeners) listener(server)
  }

  #declare (server: string, listed: readonly McpToolInfo[]): Tools {
    const connection = this.#connections.find(c => c.config.name === server)!
    const others = new Map<string, string>()
    for (const [name, tools] of this.#tools) {
      if (name !== server) for (const tool of tools) others.set(tool.id, `${name}/${tool.origin?.name ?? tool.id}`)
    }
    const seen = new Map<string, string>()
    const out: AnyTool<GatewayApp>[] = []
    for (const upstream of listed) {
      const where = `${server}/${upstream.name}`
      const id = upstreamToolId(server, upstream.name, this.file.rename)
      if (id === undefined) throw new ConfigError(`upstreams file ${this.file.path}: the tool "${where}" maps to no valid tool id; name it in "rename": { "${where}": "some_id" }`)
      const clash = seen.get(id) ?? others.get(id)
      if (clash !== undefined) throw new ConfigError(`upstreams file ${this.file.path}: "${where}" and "${clash}" both map to the tool id "${id}"; tell them apart in "rename"`)
      seen.set(id, where)
      const operator = operatorFor(id, this.file.tools)
      const key = JSON.stringify([upstream, operator])
      const cached = this.#defined.get(`${server}\0${id}`)
      if (cached?.key === key) {
        out.push(cached.tool)
        continue
      }
      const tool = defineTool(declarationOf({ id, upstream, operator, connection }), { source: where }) as unknown as AnyTool<GatewayApp>
      this.#defined.set(`${server}\0${id}`, { key, tool })
      out.push(tool)
    }
    return out
  }

  /**
   * An exact id in `tools` that names no upstream tool is a typo that would leave a tool
   * undeclared (no approval, say): with every server up, that stops start-up; otherwise the
   * server that is down may still list it, so it is only logged.
   */
  #checkOperatorIds (): void {
    const ids = new Set(this.tools().map(tool => tool.id))
    const allUp = this.#connections.every(connection => connection.state === 'up')
    // Only ids that would belong to a server serving here: one of a disabled server's is no typo.
    const ours = (key: string): boolean => Object.values(this.file.rename).includes(key) || this.#connections.some(connection => key.startsWith(`${idPartOf(connection.config.name)}_`))
    for (const key of Object.keys(this.file.tools)) {
      if (/[*?]/.test(key) || ids.has(key)) continue
      const problem = `upstreams file ${this.file.path}: tools.${key} names no upstream tool`
      if (allUp && ours(key)) throw new ConfigError(problem)
      this.#log.warn({ tool: key }, `${problem} (yet: an upstream is down)`)
    }
  }
}

/** The upstreams of the file at `path`, started; on a start-up failure, whatever it started is stopped first. */
export async function startUpstreams (path: string, options: UpstreamsOptions): Promise<Upstreams> {
  const upstreams = new Upstreams(readUpstreamsFile(path), options)
  try {
    await upstreams.start()
  } catch (error) {
    await upstreams.close()
    throw error
  }
  return upstreams
}
