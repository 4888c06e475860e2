import { AbortReason, type CancelSignal } from './abort.js'
import { Approvals, type ApprovalOptions } from './approvals/approvals.js'
import type { CallRecord } from './call-record.js'
import { CoreOptionsSchema, type CoreOptions, type CoreOptionsInput } from './options.js'
import { defineTool } from './define-tool.js'
import { InFlightCalls } from './in-flight.js'
import { ToolDefinitionError } from './errors.js'
import { invoke } from './pipeline.js'
import type { ApprovalRule, Binding, InvokeRequest, InvokeResult, PipelineEnv } from './types.js'
import { MemoryIdempotencyStore } from './idempotency/memory-store.js'
import type { IdempotencyStore } from './idempotency/store.js'
import { Scheduler, type SlotScheduler } from './scheduler.js'
import { isActive } from './steps/gates.js'
import { isDefinedTool, type AnyTool, type ToolDeclaration, type TraceContext } from './tool.js'

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
  /** The trace context a tracing host made for this call: the tool sees it as `ctx.trace`. */
  readonly trace?: TraceContext
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
  readonly tools: readonly AnyTool<App>[]
  readonly options: CoreOptions
  readonly #byId: Map<string, AnyTool<App>>
  readonly #env: PipelineEnv
  readonly #inFlight = new InFlightCalls()
  #drained: (() => void) | undefined
  #closing = false

  constructor (tools: readonly AnyTool<App>[], options: CatalogOptions = {}) {
    this.tools = Object.freeze([...tools])
    this.#byId = new Map()
    for (const tool of tools) {
      if (this.#byId.has(tool.id)) {
        const first = this.#byId.get(tool.id)!
        throw new ToolDefinitionError(tool.id, 'id', `is declared twice${first.source === undefined ? '' : ` (first in ${first.source})`}`, tool.source)
      }
      this.#byId.set(tool.id, tool)
    }
    this.options = CoreOptionsSchema.parse(options.core ?? {})
    this.#env = {
      tools: this.#byId,
      scheduler: options.schedulers?.domains ?? new Scheduler({ maxQueuePerDomain: this.options.maxQueuePerDomain }),
      toolScheduler: options.schedulers?.tools ?? new Scheduler({ maxQueuePerDomain: 0 }),
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
    }
  }

  ids (): string[] {
    return this.tools.map(tool => tool.id)
  }

  get (id: string): AnyTool<App> | undefined {
    return this.#byId.get(id)
  }

  /** The tools offered to `app`, in declaration order (inactive ones are invisible). */
  active (app: App): AnyTool<App>[] {
    return this.tools.filter(tool => tool.active === undefined || isActive(tool, app))
  }

  /** The approvals of this catalog's calls: list, read and decide them (any adapter). */
  get approvals (): Approvals {
    return this.#env.approvals
  }

  get scheduler (): SlotScheduler {
    return this.#env.scheduler
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
    const env = this.#env
    return {
      invoke: <T>(request: InvokeRequest): Promise<InvokeResult<T>> => invoke(env, binding, request) as Promise<InvokeResult<T>>,
    }
  }

  /** One call with its own context: `bind(options).invoke(request)` without the invoker. */
  invokeWith<T = unknown> (options: BindOptions<App>, request: InvokeRequest): Promise<InvokeResult<T>> {
    return invoke(this.#env, bindingOf(options), request) as Promise<InvokeResult<T>>
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
    planMode: options.mode === 'plan',
    escalationApproved: options.escalationApproved === true,
    isPermitted: options.isPermitted,
    onRecord: options.onRecord,
    serialize: options.serialize,
    requester: options.requester,
    approvalRule: options.approvalRule,
    transport: options.transport,
    trace: options.trace,
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
  return new ToolCatalog(tools.map(tool => (isDefinedTool(tool) ? tool : defineTool(tool as ToolDeclaration))) as AnyTool<App>[], options)
}
