/*
 * The types the pipeline and its steps share, in one module that holds nothing else: steps
 * import from here, never from `pipeline.ts`, so the pipeline depends on its steps and not
 * the other way round.
 */
import type { CallControl, CancelSignal } from './abort.js'
import type { Approvals } from './approvals/approvals.js'
import type { ApprovalView } from './approvals/view.js'
import type { CallRecord } from './call-record.js'
import type { ContentBlock } from './content.js'
import type { IdempotencyStore } from './idempotency/store.js'
import type { CoreOptions } from './options.js'
import type { QueueShares } from './queue-shares.js'
import type { SlotScheduler } from './scheduler.js'
import type { Settled } from './steps/run-execute.js'
import type { AnyTool, ToolContext, TraceContext } from './tool.js'
import type { ProgressUpdate } from './progress.js'
import type { Elicit } from './elicitation.js'
import type { Limits } from './limits/limits.js'
import type { LimitUse } from './limits/report.js'

interface IdempotencyOptions {
  readonly store: IdempotencyStore
  readonly ttlMs: number
}

/** What the catalog shares with every call. */
export interface PipelineEnv {
  readonly tools: ReadonlyMap<string, AnyTool>
  readonly scheduler: SlotScheduler
  /** Per-tool limits across domains (only tools with a configured limit use it). */
  readonly toolScheduler: SlotScheduler
  /** Each principal's share of those tools' queues. */
  readonly queueShares: QueueShares
  readonly options: CoreOptions
  readonly isClosing: () => boolean
  /** In-flight bookkeeping, so shutdown can wait for calls and then abort them. */
  readonly begin: (control: CallControl) => void
  readonly end: (control: CallControl) => void
  readonly observers: ReadonlyArray<(record: CallRecord) => void>
  readonly idempotency: IdempotencyOptions
  readonly approvals: Approvals
  /** The rates, quotas and budgets calls are charged against (most tools are under none). */
  readonly limits: Limits
}

/** One bound context: the app, and what the host decided about this caller. */
export interface Binding<App> {
  readonly app: App
  readonly signal?: CancelSignal
  readonly domain: string
  /** Whose idempotency keys these are: keys of different scopes never meet. */
  readonly idempotencyScope: string
  readonly planMode: boolean
  readonly escalationApproved: boolean
  readonly isPermitted?: (tool: AnyTool<App>) => boolean
  /** Told of every settled call of this binding, success or failure: where a host logs it. */
  readonly onRecord?: (record: CallRecord) => void
  /**
   * The transport's encoding of a result (JSON for HTTP). Run inside the pipeline so that a
   * value the transport cannot carry (circular, too large) is the tool's invalid output, a 502
   * in the record and the metrics, not a crash after the call was counted as ok.
   */
  readonly serialize?: (value: unknown) => string
  /** The host's trace context of this call, handed to the tool as `ctx.trace`. */
  readonly trace?: TraceContext
  /** Which face the call came through; copied into the record (absent: the REST route). */
  readonly transport?: string
  /** The bundle the call came through; copied into the record (absent: none). */
  readonly bundle?: string
  /** Whether the face carries MCP content blocks (see `BindOptions.contentBlocks`). */
  readonly contentBlocks: boolean
  /** Who asks when a call needs approval (default: `idempotencyScope`). */
  readonly requester?: string
  /** The operator's rule for this caller: undefined when none asks for approval of `tool`. */
  readonly approvalRule?: (tool: AnyTool<App>) => ApprovalRule | undefined
}

/** An operator rule that matched: the call needs approval, by one of `approvers` when any are named. */
export interface ApprovalRule {
  readonly approvers: readonly string[]
}

export interface InvokeRequest {
  readonly toolId: string
  readonly input: unknown
  /** Validate and authorize, then return `resolve(input)`; nothing executes. */
  readonly dryRun?: boolean
  /** Ask to escalate: needs `supportsEscalation` and the binding's approval. */
  readonly escalate?: boolean
  /** Aborts this call only (the binding's signal aborts every call of the binding). */
  readonly signal?: CancelSignal
  /** Run at most once per key (and scope and tool); a repeat replays the stored answer. */
  readonly idempotencyKey?: string
  /** Run the call this approval was given for (exactly once; a repeat replays its answer). */
  readonly approvalId?: string
  /** When the call needs approval, or its `approvalId` is undecided: wait up to this long for the decision (`Prefer: wait`). */
  readonly waitForApprovalMs?: number
  /** Told how far the call has got, while it runs (the tool's `ctx.progress`, paced; see `ProgressReporter`). */
  readonly onProgress?: (update: ProgressUpdate) => void
  /** Asks the person at the other end, when the tool does (`ctx.elicit`); absent: the tool cannot ask. */
  readonly onElicit?: Elicit
}

export interface InvokeResult<T = unknown> {
  readonly value: T
  readonly record: CallRecord
  /** True when the value is a stored answer to an earlier call with the same idempotency key. */
  readonly replayed: boolean
  /** `value` encoded by the binding's `serialize`, when it has one. */
  readonly body?: string
  /**
   * Set when nothing ran because the call waits for a person: `value` is this same pending
   * approval, and a transport answers it as such (HTTP 202), never as the tool's output.
   */
  readonly approval?: ApprovalView
  /** True when this call waited for an approval decision (`waitForApprovalMs`) and then ran. */
  readonly waitedForApproval?: boolean
  /** The MCP content the tool answered beside its output (`withContent`), for the faces that carry it. */
  readonly content?: Presentation
  /** The limits that cover the call: what it spent of each and what is left (a dry run: what it would spend). */
  readonly limits?: readonly LimitUse[]
}

/** A tool's MCP content blocks and structured content, as it answered them (`withContent`). */
export interface Presentation {
  readonly content: readonly ContentBlock[]
  /** The blocks encoded by the binding's `serialize` (bounded like the output), when it has one. */
  readonly body?: string
  /** Present when the tool named it; else a face takes the output where the tool declares an output schema. */
  readonly structuredContent?: unknown
  readonly hasStructuredContent: boolean
}

/** What the execute step tells the idempotency step: a late settlement when the call was aborted mid-run. */
export interface ExecutionHandle {
  late?: Promise<Settled>
  /** The content the tool answered beside its output, once it has (and on a replay, the stored one). */
  presentation?: Presentation
  /** The fencing token of the slot the call holds, once granted (`ctx.fencingToken`). */
  fencingToken?: number
  /** What the call was charged of its limits, once it was. */
  limits?: readonly LimitUse[]
}

/** One call past its gates: everything the scheduling and execution steps need, in one value. */
// eslint-disable-next-line @typescript-eslint/no-explicit-any -- a call of any app, like AnyTool
export interface Call<App = any> {
  readonly env: PipelineEnv
  readonly binding: Binding<App>
  readonly tool: AnyTool<App>
  readonly input: unknown
  readonly ctx: ToolContext<App>
  readonly control: CallControl
  readonly record: CallRecord
  readonly handle: ExecutionHandle
}
