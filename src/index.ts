/**
 * toolgate's core: declare tools, put them in a catalog, invoke them. No HTTP in here; the
 * Fastify plugins under `plugins/` are thin adapters over these exports.
 */
export { defineTool, type DefineOptions } from './core/define-tool.js'
export { defineToolCatalog, ToolCatalog, type BindOptions, type CatalogOptions, type Invoker } from './core/catalog.js'
export type { InvokeRequest, InvokeResult } from './core/pipeline.js'
export { ToolError, GatewayError, ToolgateError, ToolDefinitionError, ERRORS, ERROR_PREFIX, type ErrorCode, type InputIssue } from './core/errors.js'
export { EFFECTS, type Effect, type Tool, type AnyTool, type ToolDeclaration, type ToolContext, type DebugContext, type DebugStep } from './core/tool.js'
export { OUTCOMES, type Outcome, type CallRecord } from './core/call-record.js'
export { CoreOptionsSchema, type CoreOptions } from './core/options.js'
export { Scheduler, QueueFullError, type Lease, type Ticket } from './core/scheduler.js'
export { MemoryIdempotencyStore } from './core/idempotency/memory-store.js'
export { StoreUnavailableError, type IdempotencyStore, type Claim, type StoredResult } from './core/idempotency/store.js'
export type { CancelSignal } from './core/abort.js'
