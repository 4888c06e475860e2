import { AbortReason, type CancelSignal } from './abort.js'
import { checkMode } from './call-options.js'
import { Approvals, type ApprovalOptions } from './approvals/approvals.js'
import type { CallRecord } from './call-record.js'
import { QueueShares } from './queue-shares.js'
import { CoreOptionsSchema, type CoreOptions, type CoreOptionsInput } from './options.js'
import { defineTool } from './define-tool.js'
import { InFlightCalls } from './in-flight.js'
import { invoke } from './pipeline.js'
import type { ApprovalRule, Binding, InvokeRequest, InvokeResult, PipelineEnv } from './types.js'
import { MemoryIdempotencyStore } from './idempotency/memory-store.js'
import type { IdempotencyStore } from './idempotency/store.js'
import { Scheduler, type SlotScheduler } from './scheduler.js'
import { isDefinedTool, type AnyTool, type ToolDeclaration, type TraceContext } from './tool.js'
import { changeBetween, ToolSet, type ToolSetChange } from './tool-set.js'
import { Limits, type LimitsOptions } from './limits/limits.js'

export interface CatalogOptions {
  readonly core?: CoreOptionsInput
  /** Called with the record of every call that reached a known, active tool. */
  readonly onRecord?: (record: CallRecord) => void
  /** Where idempotency records live (default: in memory, bounded) and for how long. */
  readonly idempotency?: { readonly store?: IdempotencyStore, readonly ttlMs?: number }
  /** Where approvals live (default: in memory), how long they last, their bounds. */
  readonly approvals?: ApprovalOptions
  /**
   * Schedulers shared with other processes (the gateway's Redis ones, with `REDIS_URL`):
   * `domains` for the concurrency domains, `tools` for the per-tool limits. Default: in process.
   */
  readonly schedulers?: { readonly domains: SlotScheduler, readonly tools: SlotScheduler }
  /**
   * Where the counts of limits live (default: in process, bounded) and the operator's limits
   * over the tools; the tools' own `limits` apply either way.
   */
  readonly limits?: LimitsOptions
  /** Told when an `onChange` listener throws (the change stands; the other listeners still run). */
  readonly onListenerError?: (error: unknown) => void
}

export interface BindOptions<App> {
  readonly app: App
  readonly execution?: { readonly signal?: CancelSignal }
  /** The concurrency domain (a session id, else the principal); default `default`. */
  readonly domain?: string
  /** Whose idempotency keys these are (the principal); default `default`. */
  readonly idempotencyScope?: string
  /** Plan mode: every tool that is not read-only is refused. */
  readonly mode?: 'normal' | 'plan'
  /** The host already approved escalation for this binding. Absent: each escalating call asks a person (a pending approval). */
  readonly escalationApproved?: boolean
  /** Who asks for approvals of this binding's calls (default: `idempotencyScope`). */
  readonly requester?: string
  /** The operator's approval rule for this caller and a tool; undefined when none applies. */
  readonly approvalRule?: (tool: AnyTool<App>) => ApprovalRule | undefined
  /** The host's permission rules for this caller; `false` refuses with 403. */
  readonly isPermitted?: (tool: AnyTool<App>) => boolean
  readonly onRecord?: (record: CallRecord) => void
  /** Encode results for the transport inside the pipeline (see `Binding.serialize`). */
  readonly serialize?: (value: unknown) => string
  /** Which face the call came through (`mcp`, ...), for the record and the metrics; absent: REST. */
  readonly transport?: string
  /** The operator's bundle the call came through (its own address), for the record and the metrics; absent: none. */
  readonly bundle?: string
  /** The trace context a tracing host made for this call: the tool sees it as `ctx.trace`. */
  readonly trace?: TraceContext
  /**
   * Whether this face carries a tool's MCP content blocks (`withContent`) in its answers; a face
   * that does not (REST answers the output alone) is spared encoding them. Default true.
   */
  readonly contentBlocks?: boolean
}

/** What `install` changed: the ids, and both sets. */
export interface CatalogChange<App = unknown> extends ToolSetChange {
  readonly before: ToolSet<App>
  readonly after: ToolSet<App>
}

export interface Invoker {
  invoke<T = unknown> (request: InvokeRequest): Promise<InvokeResult<T>>
}

/**
 * The tools a gateway serves, in declaration order, and the one way to call them.
 *
 * @example
 * import { z } from 'zod'
 * import { defineToolCatalog } from 'toolgate'
 * const catalog = defineToolCatalog([{
 *   id: 'get_status', kind: 'read', description: 'Read the service status.',
 *   inputSchema: z.object({}), outputSchema: z.string(),
 *   isReadOnly: true, isConcurrencySafe: true,
 *   authorize () {}, execute: () => 'ok',
 * }])
 * const tools = catalog.bind({ app: undefined, execution: { signal: AbortSignal.timeout(10_000) } })
 * const { value } = await tools.invoke({ toolId: 'get_status', input: {} })
 */
export class ToolCatalog<App = unknown> {
  readonly options: CoreOptions
  /** What every set shares: schedulers, stores, approvals, in-flight bookkeeping. */
  readonly #shared: Omit<PipelineEnv, 'tools'>
  /** The set serving now, with the pipeline environment its calls run in. */
  #current: { readonly set: ToolSet<App>, readonly env: PipelineEnv }
  readonly #listeners: Array<(change: CatalogChange<App>) => void> = []
  readonly #onListenerError: ((error: unknown) => void) | undefined
  readonly #inFlight = new InFlightCalls()
  #drained: (() => void) | undefined
  #closing = false

  constructor (tools: readonly AnyTool<App>[], options: CatalogOptions = {}) {
    const set = new ToolSet(tools, 1)
    this.options = CoreOptionsSchema.parse(options.core ?? {})
    this.#onListenerError = options.onListenerError
    this.#shared = {
      scheduler: options.schedulers?.domains ?? new Scheduler({ maxQueuePerDomain: this.options.maxQueuePerDomain }),
      toolScheduler: options.schedulers?.tools ?? new Scheduler({ maxQueuePerDomain: 0 }),
      queueShares: new QueueShares(),
      options: this.options,
      isClosing: () => this.#closing,
      begin: control => { this.#inFlight.add(control) },
      end: control => {
        this.#inFlight.delete(control)
        if (this.#inFlight.size === 0) this.#drained?.()
      },
      observers: options.onRecord === undefined ? [] : [options.onRecord],
      idempotency: {
        store: options.idempotency?.store ?? new MemoryIdempotencyStore(),
        ttlMs: options.idempotency?.ttlMs ?? 24 * 60 * 60 * 1000,
      },
      approvals: new Approvals(options.approvals),
      limits: new Limits(options.limits),
    }
    this.#current = { set, env: { ...this.#shared, tools: set.byId } }
  }

  /** The limits calls are charged against: which cover a tool, and where a caller stands. */
  get limits (): Limits {
    return this.#shared.limits
  }

  /** The set serving now: read it once per request to see one version of the catalog throughout. */
  get current (): ToolSet<App> {
    return this.#current.set
  }

  get tools (): readonly AnyTool<App>[] {
    return this.#current.set.tools
  }

  ids (): string[] {
    return this.#current.set.ids()
  }

  get (id: string): AnyTool<App> | undefined {
    return this.#current.set.get(id)
  }

  /** The tools offered to `app`, in declaration order (inactive ones are invisible). */
  active (app: App): AnyTool<App>[] {
    return this.#current.set.active(app)
  }

  /**
   * A set to install later with `install`, numbered after the one serving now. Throws
   * `ToolDefinitionError` for a duplicate id; the catalog is untouched either way.
   */
  prepare (tools: ReadonlyArray<AnyTool<App> | ToolDeclaration<any, any, App>>): ToolSet<App> { // eslint-disable-line @typescript-eslint/no-explicit-any -- declarations of any schema shape
    return new ToolSet(tools.map(definedTool), this.#current.set.version + 1)
  }

  /**
   * Serve `set` from now on, in one step: a call that started before keeps its own set (its
   * declaration, schemas, timeout and rules) to its end; every call after sees the new one.
   * The state calls share (schedulers, idempotency records, approvals) is the catalog's and
   * stays. Listeners hear of the change after the swap.
   */
  install (set: ToolSet<App>): CatalogChange<App> {
    const before = this.#current.set
    if (set.version <= before.version) throw new RangeError(`tool set ${set.version} is older than the serving one (${before.version}): prepare it again`)
    this.#current = { set, env: { ...this.#shared, tools: set.byId } }
    const change = { ...changeBetween(before, set), before, after: set }
    // The swap is done: a listener that throws must not make it look undone, nor skip the others.
    for (const listener of this.#listeners) {
      try {
        listener(change)
      } catch (error) {
        this.#onListenerError?.(error)
      }
    }
    return change
  }

  /** `install(prepare(tools))`: replace every tool at once. */
  replace (tools: ReadonlyArray<AnyTool<App> | ToolDeclaration<any, any, App>>): CatalogChange<App> { // eslint-disable-line @typescript-eslint/no-explicit-any -- declarations of any schema shape
    return this.install(this.prepare(tools))
  }

  /** Hear of every installed set (metrics, documents, listings that keep per-tool state). */
  onChange (listener: (change: CatalogChange<App>) => void): void {
    this.#listeners.push(listener)
  }

  /** The approvals of this catalog's calls: list, read and decide them (any adapter). */
  get approvals (): Approvals {
    return this.#shared.approvals
  }

  get scheduler (): SlotScheduler {
    return this.#shared.scheduler
  }

  get closing (): boolean {
    return this.#closing
  }

  get inFlight (): number {
    return this.#inFlight.size
  }

  /** Bind one caller's context; the invoker runs every call through the full pipeline. */
  bind (options: BindOptions<App>): Invoker {
    const binding = bindingOf(options)
    // Each call runs in the set serving when it starts: a bound invoker follows replacements.
    return {
      invoke: <T>(request: InvokeRequest): Promise<InvokeResult<T>> => invoke(this.#current.env, binding, request) as Promise<InvokeResult<T>>,
    }
  }

  /** One call with its own context: `bind(options).invoke(request)` without the invoker. */
  invokeWith<T = unknown> (options: BindOptions<App>, request: InvokeRequest): Promise<InvokeResult<T>> {
    let binding: Binding<App>
    try {
      binding = bindingOf(options)
    } catch (error) {
      return Promise.reject(error as Error)
    }
    return invoke(this.#current.env, binding, request) as Promise<InvokeResult<T>>
  }

  /**
   * One call of a defined tool that is not in the set: an upstream server's resource read or
   * prompt get, which runs as a call (the same steps, record, metrics and audit) but is no tool
   * a caller lists or calls by name. The caller has found it and checked it may use it;
   * `request.toolId` is ignored.
   */
  invokeUnlisted<T = unknown> (options: BindOptions<App>, tool: AnyTool<App>, request: InvokeRequest): Promise<InvokeResult<T>> {
    let binding: Binding<App>
    try {
      if (!isDefinedTool(tool)) throw new TypeError('invokeUnlisted takes a tool made by defineTool')
      binding = bindingOf(options)
    } catch (error) {
      return Promise.reject(error as Error)
    }
    return invoke(this.#current.env, binding, request, tool) as Promise<InvokeResult<T>>
  }

  /**
   * Refuse new calls (503), let calls in flight finish for up to `graceMs`, then abort the
   * rest through their signals. Resolves when every call has settled.
   */
  async shutdown (graceMs: number): Promise<void> {
    this.#closing = true
    if (this.#inFlight.size > 0) {
      const drained = new Promise<void>(resolve => { this.#drained = resolve })
      let timer: NodeJS.Timeout | undefined
      await Promise.race([drained, new Promise<void>(resolve => { timer = setTimeout(resolve, graceMs) })])
      clearTimeout(timer)
      for (const control of this.#inFlight.toArray()) control.abort(new AbortReason('shutdown', 'the gateway shut down before the call finished'))
      // Aborted calls settle at once (their tools may linger; their slots follow the grace rule).
      if (this.#inFlight.size > 0) await drained
    }
  }
}

function bindingOf<App> (options: BindOptions<App>): Binding<App> {
  return {
    app: options.app,
    signal: options.execution?.signal,
    domain: options.domain ?? 'default',
    idempotencyScope: options.idempotencyScope ?? 'default',
    // A mode that is neither is refused, never read as normal: `'PLAN'` must not run a write.
    planMode: checkMode(options.mode) === 'plan',
    escalationApproved: options.escalationApproved === true,
    isPermitted: options.isPermitted,
    onRecord: options.onRecord,
    serialize: options.serialize,
    requester: options.requester,
    approvalRule: options.approvalRule,
    transport: options.transport,
    bundle: options.bundle,
    trace: options.trace,
    contentBlocks: options.contentBlocks !== false,
  }
}

/**
 * Define a catalog from tools or plain declarations: rejects duplicate ids, keeps order.
 * See {@link ToolCatalog} for an example.
 */
export function defineToolCatalog<App = unknown> (
  // eslint-disable-next-line @typescript-eslint/no-explicit-any -- declarations of any schema shape
  tools: ReadonlyArray<AnyTool<App> | ToolDeclaration<any, any, App>>,
  options?: CatalogOptions,
): ToolCatalog<App> {
  return new ToolCatalog(tools.map(definedTool), options)
}

function definedTool<App> (tool: AnyTool<App> | ToolDeclaration<any, any, App>): AnyTool<App> { // eslint-disable-line @typescript-eslint/no-explicit-any -- declarations of any schema shape
  return (isDefinedTool(tool) ? tool : defineTool(tool as ToolDeclaration)) as AnyTool<App>
}
