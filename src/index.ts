/**
 * `toolgate`: the core. Declare tools, put them in a catalog, invoke them, and every type a
 * tool author needs (including the app a tool's `ctx.app` is when the gateway serves it).
 * No HTTP in here; `toolgate/server` is the gateway built on these exports.
 */
export { defineTool, type DefineOptions } from './core/define-tool.js'
export { defineSchema, type SchemaAdapter } from './core/schema-adapter.js'
export type { ToolSchema, SchemaInput, SchemaOutput } from './core/schema.js'
export type { StandardSchemaV1, StandardJSONSchemaV1, StandardSchemaWithJSON } from './core/standard-schema.js'
export { defineToolCatalog, ToolCatalog, type BindOptions, type CatalogChange, type CatalogOptions, type Invoker } from './core/catalog.js'
export { ToolSet, type ToolSetChange } from './core/tool-set.js'
export type { InvokeRequest, InvokeResult, Presentation } from './core/types.js'
export { withContent, type ContentBlock, type WithContent } from './core/content.js'
export { PROGRESS_INTERVAL_MS, type ProgressUpdate } from './core/progress.js'
export { ToolError, GatewayError, UpstreamError, ToolgateError, ToolDefinitionError, ERRORS, ERROR_PREFIX, type ErrorCode, type InputIssue, type ToolgateErrorOptions } from './core/errors.js'
export { EFFECTS, isDefinedTool, type Effect, type Tool, type AnyTool, type ToolDeclaration, type ToolContext, type TraceContext, type DebugContext, type DebugStep, type IntentDeclaration, type ToolOrigin, type ToolErrorDeclaration } from './core/tool.js'
export { OUTCOMES, type Outcome } from './core/outcome.js'
export type { CallRecord } from './core/call-record.js'
export { SCOPES, type GatewayApp, type GatewayFacts, type Principal, type ToolLogger } from './core/app-context.js'
export { CoreOptionsSchema, type CoreOptions } from './core/options.js'
export { Scheduler, QueueFullError, type Lease, type SlotScheduler, type Ticket } from './core/scheduler.js'
export { MemoryIdempotencyStore } from './core/idempotency/memory-store.js'
export { StoreUnavailableError, type IdempotencyStore, type Claim, type StoredResult } from './core/idempotency/store.js'
export type { CancelSignal } from './core/abort.js'
export { Approvals, APPROVAL_ID, type ApprovalEvent, type ApprovalOptions, type Decider } from './core/approvals/approvals.js'
export { MemoryApprovalStore } from './core/approvals/memory-store.js'
export { currentStatus, type ApprovalStore, type ApprovalRecord, type ApprovalRequest, type ApprovalStatus, type ApprovalReason, type ApprovalLimits, type CreateResult, type DecideResult, type Decision, type ConsumeResult } from './core/approvals/store.js'
export { viewOf, type ApprovalView } from './core/approvals/view.js'
export type { ApprovalRule } from './core/types.js'
