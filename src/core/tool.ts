import type { SchemaInput, SchemaOutput, SchemaSnapshot, ToolSchema } from './schema.js'
import type { WithContent } from './content.js'
import type { ProgressUpdate } from './progress.js'
import type { ElicitationAnswer, ElicitationRequest } from './elicitation.js'
import type { ToolLimitDeclaration } from './limits/declaration.js'
import type { Limit } from './limits/limit.js'

/** The declared side effects: the author's own account, a signal and never a gate. */
export const EFFECTS = ['irreversible', 'financial', 'external', 'affects-others'] as const
export type Effect = (typeof EFFECTS)[number]

/** One recorded sub-step of a finished call, written by `debugSteps`. */
export interface DebugStep {
  readonly name: string
  readonly data?: unknown
}

/**
 * What `authorize`, `execute` and `resolve` see of one call. `app` is whatever the host bound:
 * over HTTP it carries the principal, scopes, request id, logger and concurrency domain.
 */
export interface ToolContext<App> {
  readonly app: App
  readonly toolId: string
  readonly callId: string
  /** Aborts on timeout, on the caller's cancellation and on shutdown. */
  readonly signal: AbortSignal
  /**
   * The same abort without an `AbortSignal` (made only when `signal` is read, and it costs
   * microseconds): `listener` runs once with the reason, at once when the call is aborted
   * already; call the function returned when the work is done. Always there in a call the
   * pipeline runs.
   */
  readonly onAbort?: (listener: (reason: Error) => void) => () => void
  /** True when this call asked for, and was granted, escalation. */
  readonly escalated: boolean
  readonly dryRun: boolean
  /**
   * With a scheduler shared by replicas (`REDIS_URL`): the fencing token of the concurrency
   * slot this call holds, larger for every later grant. A tool writing to another system can
   * send it along, and that system can refuse a write carrying a token lower than one it saw:
   * that is a write from a slot whose lease expired. Undefined in process and before `execute`.
   */
  readonly fencingToken?: number
  /**
   * The W3C trace context of this call when the host traces it (absent otherwise): send these
   * as the `traceparent` / `tracestate` headers of the tool's own outgoing requests, so they
   * join the caller's trace.
   */
  readonly trace?: TraceContext
  /**
   * Tell the caller how far the call has got (MCP's `notifications/progress`). Present only when
   * someone listens: an MCP client that sent a `progressToken` over a channel that carries
   * notifications, or `InvokeRequest.onProgress` in process; so a tool writes
   * `ctx.progress?.({ progress: done, total })`. `progress` must increase (a value not above the
   * last is dropped), updates are paced to ten a second (the latest is kept), and nothing is
   * told once the call is settled. A malformed update throws a `TypeError`.
   */
  readonly progress?: (update: ProgressUpdate) => void
  /**
   * Ask the person at the other end a question and wait for the answer (MCP's elicitation, form
   * mode). Present only when the caller can ask one: an MCP client that declared it can answer
   * over a channel that carries a request back to it (see the docs), or `onElicit` in process.
   * Resolves `accept` with `content`, `decline`, or `cancel` (also when the call ends first or
   * the answer is malformed); it never throws but for a malformed question (`TypeError`).
   */
  readonly elicit?: (request: ElicitationRequest) => Promise<ElicitationAnswer>
}

/** W3C Trace Context headers (`traceparent`, `tracestate`), as plain strings. */
export interface TraceContext {
  readonly traceparent: string
  readonly tracestate?: string
}

export interface DebugContext {
  /** Record one sub-step of the finished call into its record's `debugSteps`. */
  step (name: string, data?: unknown): void
}

type MaybePromise<T> = T | Promise<T>

/** One of a tool's own `limits`, its budget's amount typed by the tool's input. */
export type ToolLimitOf<Input> = Omit<ToolLimitDeclaration, 'budget'> & {
  readonly budget?: Omit<NonNullable<ToolLimitDeclaration['budget']>, 'amount'> & { readonly amount: string | ((input: Input) => number) }
}

/**
 * A tool as its author writes it. Input and output types come from the schemas (zod, a Standard
 * Schema or `defineSchema`), so a tool file needs no type arguments. Every field is described in
 * docs/declaration.md.
 */
export interface ToolDeclaration<In extends ToolSchema = ToolSchema, Out extends ToolSchema = ToolSchema, App = unknown> {
  readonly id: string
  readonly kind: string
  readonly description: string
  readonly shortDescription?: string
  readonly inputSchema: In
  readonly outputSchema: Out
  readonly parseOutput?: (value: unknown) => SchemaOutput<Out>
  readonly effects?: readonly Effect[]
  /**
   * The tool's own failures beyond the gateway's: each `ToolError` status and code it may
   * throw, documented on its operation. A `ToolError` whose status the gateway's catalogue
   * does not document for every call (410, 504 and any status outside the catalogue) is
   * answered only when declared here; otherwise it is a 500 tool failure.
   */
  readonly errors?: readonly ToolErrorDeclaration[]
  readonly isReadOnly: boolean
  readonly isConcurrencySafe: boolean
  /** A whole number >= 1, or a getter read at every call. */
  readonly selfConcurrency?: number | (() => number)
  readonly timeoutMs?: number
  readonly interactive?: boolean
  readonly supportsEscalation?: boolean
  /** Callers must send an idempotency key; a call without one is refused. */
  readonly requiresIdempotencyKey?: boolean
  /**
   * A person approves each call before it runs: always (`true`), or when this predicate says so
   * (one that throws, or answers anything but `false`, asks).
   */
  readonly requiresApproval?: boolean | ((input: SchemaOutput<In>, ctx: ToolContext<App>) => boolean)
  /**
   * How often, or how much, this tool may be called: rates, quotas and budgets per principal,
   * session or everyone, refused past them (429) or asked of a person (docs/limits.md). A
   * budget's `amount` is a CEL expression over `input` or a function of the parsed input.
   */
  readonly limits?: ReadonlyArray<ToolLimitOf<SchemaOutput<In>>>
  readonly active?: (app: App) => boolean
  readonly authorize: (input: SchemaOutput<In>, ctx: ToolContext<App>) => MaybePromise<void>
  /** Answers the output, or the output `withContent`: MCP content blocks beside it, for the faces that carry them. */
  readonly execute: (input: SchemaOutput<In>, ctx: ToolContext<App>) => MaybePromise<SchemaInput<Out> | WithContent<SchemaInput<Out>>>
  readonly resolve?: (input: SchemaOutput<In>, ctx: ToolContext<App>) => unknown
  readonly debugSteps?: (result: SchemaOutput<Out>, ctx: DebugContext) => void
  readonly touchedResourcesOf?: (input: unknown) => readonly string[]
  readonly mutatedResourcesOf?: (input: unknown) => readonly string[]
  /** Also advertise this tool as an intent a model may pick (`GET /intents`); absent: not advertised. */
  readonly asIntent?: boolean | IntentDeclaration
  /** Set when the gateway fronts a tool served elsewhere (an MCP server's tool): where it really runs. */
  readonly origin?: ToolOrigin
}

/** One failure a tool may answer on purpose (`throw new ToolError(status, code, ...)`). */
export interface ToolErrorDeclaration {
  /** The HTTP status, 400-599. */
  readonly status: number
  /** The tool's own code, as the `ToolError` carries it (upper snake case, not `TOOLGATE_`). */
  readonly code: string
  /** When the tool answers it, and what the caller can do: the document shows it. */
  readonly description: string
}

/**
 * Where a fronted tool really runs, and who declared each of its flags: the listings show it,
 * since an upstream's own hints are untrusted and the operator's declaration wins over them.
 */
export interface ToolOrigin {
  /** The kind of upstream: `mcp` for an MCP server, `openapi` for an HTTP service. */
  readonly type: string
  /** The upstream's name in the upstreams file. */
  readonly server: string
  /** The tool's own name on that upstream (an operation's operationId, or `{method} {path}`). */
  readonly name: string
  /** An HTTP operation's method and path template, as its document has them. */
  readonly method?: string
  readonly path?: string
  /** How calls reach the upstream beyond its static headers (its `auth` mode); absent: those headers alone. */
  readonly credential?: 'client_credentials' | 'token_exchange' | 'link' | 'identity'
  /** For each declared field (`isReadOnly`, `effects`, ...): `operator`, `upstream` (its annotations) or `default`. */
  readonly declaredBy: Readonly<Record<string, 'operator' | 'upstream' | 'default'>>
}

/** How a tool is advertised as an intent: the intent's name is the tool id. */
export interface IntentDeclaration {
  /** What the model reads when choosing this intent; default: the tool's description. */
  readonly description?: string
}

/**
 * A defined tool: frozen, detached from its declaration, handlers bound, schemas snapshotted,
 * defaults filled in. Only `defineTool` makes one.
 */
export interface Tool<In extends ToolSchema = ToolSchema, Out extends ToolSchema = ToolSchema, App = unknown>
  extends Omit<ToolDeclaration<In, Out, App>, 'inputSchema' | 'outputSchema' | 'parseOutput' | 'effects' | 'errors' | 'asIntent' | 'origin' | 'limits'> {
  readonly inputSchema: SchemaSnapshot<In>
  readonly outputSchema: SchemaSnapshot<Out>
  /** Present when the tool is advertised as an intent. */
  readonly asIntent?: IntentDeclaration
  readonly parseOutput: (value: unknown) => SchemaOutput<Out>
  /** Sorted, without duplicates; empty when none were declared. */
  readonly effects: readonly Effect[]
  /** Frozen, sorted by status then code; empty when none were declared. */
  readonly errors: readonly ToolErrorDeclaration[]
  /** `effects` as the metrics label: comma-joined, or `none`. */
  readonly effectsLabel: string
  /** Where the declaration came from, for start-up errors (a file path, when the loader knows it). */
  readonly source?: string
  /** Frozen copy of the declaration's `origin`. */
  readonly origin?: ToolOrigin
  /** The tool's own limits, compiled (named `{id}.{name}`); empty when none were declared. */
  readonly limits: readonly Limit[]
  readonly [DEFINED]: true
}

export const DEFINED: unique symbol = Symbol.for('toolgate.defined')

// eslint-style escape hatch kept to one place: catalogs hold tools of many shapes.
// eslint-disable-next-line @typescript-eslint/no-explicit-any
export type AnyTool<App = any> = Tool<ToolSchema, ToolSchema, App>

/** The scheduling class of a call, derived from the declaration at every call. */
export type ConcurrencyClass =
  | { readonly type: 'shared' }
  | { readonly type: 'exclusive' }
  | { readonly type: 'group', readonly toolId: string, readonly limit: number }

export function isDefinedTool (value: unknown): value is AnyTool {
  return typeof value === 'object' && value !== null && (value as Record<symbol, unknown>)[DEFINED] === true
}
