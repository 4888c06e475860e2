import type { Tool as McpToolInfo } from '@modelcontextprotocol/client'
import type { GatewayApp } from '../../core/app-context.js'
import { defineTool } from '../../core/define-tool.js'
import type { z } from 'zod'
import type { AnyTool, ToolDeclaration } from '../../core/tool.js'
import { ConfigError, type Config } from '../config.js'
import { publicBaseUrl } from '../public-url.js'
import { StartError } from '../start-error.js'
import { CounterFamily, GaugeFamily } from '../metrics/families.js'
import { UpstreamConnection } from './mcp/connection.js'
import { PersonalChildren } from './mcp/personal-children.js'
import type { UpstreamLog, UpstreamStatus } from './status.js'
import { declarationOf } from './mcp/declarations.js'
import { UpstreamFeatures } from './mcp/features.js'
import { operatorFor } from './operator.js'
import { OperatorLimitSet } from '../limits/operator-limits.js'
import { BundleSet } from '../bundles/bundle-set.js'
import { LiveBundles } from '../bundles/live-bundles.js'
import { readUpstreamsFile, type OperatorDeclaration, type UpstreamsFile } from './file.js'
import { idPartOf, upstreamToolId } from './names.js'
import { operationDeclarationOf } from './openapi/declarations.js'
import type { OperationPlan } from './openapi/operation.js'
import { OpenApiService } from './openapi/service.js'
import { Credentials, type CredentialSettings } from './credentials/credentials.js'

/*
 * Every upstream of the upstreams file, owned by one object: it starts them (children and
 * connections, OpenAPI documents read), turns each server's tool list and each service's
 * operations into declarations, tells the gateway when a list changes, and stops them all.
 * Nothing else starts or stops an upstream.
 */

export interface UpstreamsOptions {
  readonly log: UpstreamLog
  readonly maxMessageBytes: number
  /** How long each server's first connection may take at start-up. */
  readonly connectTimeoutMs?: number
  readonly backoff?: { readonly initialMs: number, readonly maxMs: number }
  /** The gateway's tool timeout: a call's credential may take a share of it. */
  readonly toolTimeoutMs?: number
  /** Where upstream tokens are shared and sealed, and the gateway's signing key (see credentials/). */
  readonly credentials?: Omit<CredentialSettings, 'log'>
}

type Tools = readonly AnyTool<GatewayApp>[]

/** One tool an upstream offers, before it has an id: its own name, what identifies its version, and its declaration. */
interface Offered {
  readonly name: string
  readonly version: unknown
  readonly declare: (id: string, operator: OperatorDeclaration) => ToolDeclaration<z.ZodType, z.ZodType, GatewayApp>
}

export class Upstreams {
  readonly file: UpstreamsFile
  /** The servers' resources, resource templates and prompts, as each caller may see them. */
  readonly features: UpstreamFeatures
  readonly #connections: UpstreamConnection[]
  readonly #services: OpenApiService[]
  readonly #tools = new Map<string, Tools>()
  /** One defined tool per upstream tool as last listed: an unchanged tool keeps its declaration. */
  readonly #defined = new Map<string, { readonly key: string, readonly tool: AnyTool<GatewayApp> }>()
  readonly #listeners = new Set<(server: string) => void>()
  /** Why a server's tools could not be declared, kept for start-up to throw. */
  readonly #pending = new Map<string, Error>()
  readonly #up: GaugeFamily
  readonly #restarts: CounterFamily
  readonly #log: UpstreamLog
  /** Every upstream's credential beyond its static headers. */
  readonly credentials: Credentials | undefined
  /** The operator's rates, quotas and budgets, over local and upstream tools alike. */
  readonly limits: OperatorLimitSet
  /** The operator's bundles, read again on each reload. */
  readonly bundles: LiveBundles
  #started = false

  constructor (file: UpstreamsFile, options: UpstreamsOptions, credentials?: Credentials) {
    this.file = file
    this.limits = new OperatorLimitSet(file.limits, `upstreams file ${file.path}`)
    const where = `upstreams file ${file.path}`
    this.bundles = new LiveBundles(new BundleSet(file.bundles, where), () => new BundleSet(readUpstreamsFile(file.path).bundles, where))
    this.credentials = credentials
    this.#log = options.log
    this.#up = new GaugeFamily('toolgate_upstream_up', 'Whether an upstream MCP server is connected (1) or not (0), by upstream')
    this.#restarts = new CounterFamily('toolgate_upstream_restarts_total', 'Restarts of an upstream\'s process or reconnections to it after the first connection, by upstream')
    this.#connections = file.servers.map(server => {
      const up = this.#up.child({ upstream: server.name })
      const restarts = this.#restarts.child({ upstream: server.name })
      const credential = credentials?.of(server.name)
      const shared = {
        log: options.log,
        maxMessageBytes: options.maxMessageBytes,
        connectTimeoutMs: options.connectTimeoutMs,
        backoff: options.backoff,
        onTools: () => undefined,
        ...(options.toolTimeoutMs === undefined ? {} : { toolTimeoutMs: options.toolTimeoutMs }),
      }
      // A stdio server's credential is its people's children's, never the listing child's.
      const personal = server.transport === 'stdio' && server.perPerson !== undefined && credential !== undefined ? new PersonalChildren(server, credential, shared) : undefined
      return new UpstreamConnection(server, {
        ...shared,
        onState: state => { up.set(state === 'up' ? 1 : 0) },
        onRestart: () => { restarts.inc() },
        onTools: tools => { this.#listed(server.name, tools) },
        credential: server.transport === 'stdio' ? undefined : credential,
        personal,
      })
    })
    this.#services = file.services.map(service => new OpenApiService(service, {
      log: options.log,
      maxResponseBytes: options.maxMessageBytes,
      credential: credentials?.of(service.name),
      ...(options.toolTimeoutMs === undefined ? {} : { toolTimeoutMs: options.toolTimeoutMs }),
    }))
    this.features = new UpstreamFeatures(file, this.#connections)
  }

  /** The metric families, for the gateway's `/metrics`. */
  get families (): ReadonlyArray<GaugeFamily | CounterFamily> {
    return [this.#up, this.#restarts, ...this.credentials?.families ?? []]
  }

  /**
   * Start every server and wait for each one's first attempt. A server that is down then keeps
   * being retried; its tools join the catalog when it comes up; a `required` one stops start-up.
   * A tool that cannot be declared (an id collision, an operator rule that does not compile)
   * stops start-up, naming it.
   */
  async start (): Promise<void> {
    // A service whose document cannot be read stops start-up, naming it (its calls could not be built).
    await Promise.all([
      ...this.#connections.map(async connection => { await connection.start() }),
      ...this.#services.map(async service => { await service.load() }),
    ])
    // A required server is one the gateway cannot serve without: down at start, the start fails (and what started is stopped).
    const down = this.#connections.find(connection => connection.config.required && connection.state !== 'up')
    if (down !== undefined) {
      const why = down.status().lastError
      throw new StartError(`upstream "${down.config.name}" is required and could not be reached at start-up${why === undefined ? '' : `: ${why}`}`)
    }
    for (const service of this.#services) this.#tools.set(service.config.name, this.#declare(service.config.name, this.#operations(service, service.plans)))
    this.#started = true
    for (const connection of this.#connections) {
      const tools = this.#tools.get(connection.config.name)
      if (tools === undefined && connection.state === 'up') throw this.#pending.get(connection.config.name) ?? new Error(`upstream "${connection.config.name}": no tools`)
    }
    this.#checkOperatorIds()
  }

  /**
   * Read every service's document again (what a reload of the gateway does): the upstream
   * tools as they would be, and `commit` to serve them once the catalog has taken them. A
   * document that cannot be read, or operations that cannot be declared, throw, naming the
   * service; nothing changes until `commit`.
   */
  async reload (): Promise<{ readonly tools: Tools, readonly commit: () => void }> {
    const read = await Promise.all(this.#services.map(async service => ({ service, plans: await service.read() })))
    const declared = new Map<string, Tools>()
    for (const { service, plans } of read) declared.set(service.config.name, this.#declare(service.config.name, this.#operations(service, plans), declared))
    const names = [...this.#connections.map(c => c.config.name), ...this.#services.map(s => s.config.name)]
    return {
      tools: names.flatMap(name => declared.get(name) ?? this.#tools.get(name) ?? []),
      commit: () => {
        for (const { service, plans } of read) service.commit(plans)
        for (const [name, tools] of declared) this.#tools.set(name, tools)
      },
    }
  }

  /** Every upstream tool serving now: server by server, then service by service, in file order. */
  tools (): Tools {
    return [...this.#connections.map(c => c.config.name), ...this.#services.map(s => s.config.name)].flatMap(name => this.#tools.get(name) ?? [])
  }

  /** Called with the server's name when its tools change (after start-up). */
  onChange (listener: (server: string) => void): () => void {
    this.#listeners.add(listener)
    return () => { this.#listeners.delete(listener) }
  }

  status (): UpstreamStatus[] {
    return [...this.#connections.map(connection => connection.status()), ...this.#services.map(service => service.status())]
  }

  /** Every MCP server is up: the catalog holds every upstream tool there is. */
  get complete (): boolean {
    return this.#connections.every(connection => connection.state === 'up')
  }

  /** Up, for every server the file marks `required`. */
  ready (): boolean {
    return this.#connections.every(connection => !connection.config.required || connection.state === 'up')
  }

  async close (): Promise<void> {
    for (const service of this.#services) service.close()
    await Promise.all(this.#connections.map(async connection => { await connection.close() }))
    this.credentials?.close()
  }

  #listed (server: string, listed: readonly McpToolInfo[]): void {
    const connection = this.#connections.find(c => c.config.name === server)!
    let tools: Tools
    try {
      tools = this.#declare(server, listed.map(upstream => ({ name: upstream.name, version: upstream, declare: (id, operator) => declarationOf({ id, upstream, operator, connection }) })))
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

  #operations (service: OpenApiService, plans: readonly OperationPlan[]): Offered[] {
    return plans.map(plan => ({ name: plan.name, version: [plan, service.config], declare: (id, operator) => operationDeclarationOf({ id, plan, operator, service }) }))
  }

  /**
   * The tools of upstream `server`: ids from names (or `rename`), no id twice across every
   * upstream (`also`: ids declared in the same pass), the operator's declaration applied. An
   * unchanged tool keeps its defined tool.
   */
  #declare (server: string, offered: readonly Offered[], also?: ReadonlyMap<string, Tools>): Tools {
    const others = new Map<string, string>()
    // What this pass declared replaces what that upstream had.
    for (const [name, tools] of new Map([...this.#tools, ...(also ?? [])])) {
      if (name !== server) for (const tool of tools) others.set(tool.id, `${name}/${tool.origin?.name ?? tool.id}`)
    }
    const seen = new Map<string, string>()
    const out: AnyTool<GatewayApp>[] = []
    for (const { name, version, declare } of offered) {
      const where = `${server}/${name}`
      const id = upstreamToolId(server, name, this.file.rename)
      if (id === undefined) throw new ConfigError(`upstreams file ${this.file.path}: the tool "${where}" maps to no valid tool id; name it in "rename": { "${where}": "some_id" }`)
      const clash = seen.get(id) ?? others.get(id)
      if (clash !== undefined) throw new ConfigError(`upstreams file ${this.file.path}: "${where}" and "${clash}" both map to the tool id "${id}"; tell them apart in "rename"`)
      seen.set(id, where)
      const operator = operatorFor(id, this.file.tools)
      const key = JSON.stringify([version, operator])
      const cached = this.#defined.get(`${server}\0${id}`)
      if (cached?.key === key) {
        out.push(cached.tool)
        continue
      }
      const tool = defineTool(declare(id, operator), { source: where }) as unknown as AnyTool<GatewayApp>
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
    const allUp = this.complete
    // Only ids that would belong to an upstream serving here: one of a disabled server's is no typo.
    const names = [...this.#connections.map(c => c.config.name), ...this.#services.map(s => s.config.name)]
    const ours = (key: string): boolean => Object.values(this.file.rename).includes(key) || names.some(name => key.startsWith(`${idPartOf(name)}_`))
    for (const key of Object.keys(this.file.tools)) {
      if (/[*?]/.test(key) || ids.has(key)) continue
      const problem = `upstreams file ${this.file.path}: tools.${key} names no upstream tool`
      if (allUp && ours(key)) throw new ConfigError(problem)
      this.#log.warn({ tool: key }, `${problem} (yet: an upstream is down)`)
    }
  }
}

/** The options a gateway built from `config` starts its upstreams with. */
export function upstreamsOptionsOf (config: Config, log: UpstreamLog): UpstreamsOptions {
  return {
    log,
    maxMessageBytes: config.maxResponseBytes,
    toolTimeoutMs: config.toolTimeoutMs,
    credentials: {
      ...(config.redisUrl === undefined ? {} : { redisUrl: config.redisUrl }),
      redisPrefix: config.redisPrefix,
      ...(config.credentialsKey === undefined ? {} : { credentialsKey: config.credentialsKey }),
      ...(config.upstreamSigningKey === undefined ? {} : { signingKey: config.upstreamSigningKey }),
      publicUrl: publicBaseUrl(config),
    },
  }
}

/** The upstreams of the file at `path`, started; on a start-up failure, whatever it started is stopped first. */
export async function startUpstreams (path: string, options: UpstreamsOptions): Promise<Upstreams> {
  const file = readUpstreamsFile(path)
  const credentials = await Credentials.open(file, { log: options.log, ...options.credentials })
  const upstreams = new Upstreams(file, options, credentials)
  try {
    // A credential that cannot work stops the start before anything is connected.
    await credentials.check(options.log)
    await upstreams.start()
  } catch (error) {
    await upstreams.close()
    throw error
  }
  return upstreams
}
