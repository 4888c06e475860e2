import { NONE } from '../call-record.js'
import { checkContent, isWithContent } from '../content.js'
import { GatewayError, ToolError, UpstreamError, type ToolgateError } from '../errors.js'
import type { ToolLimit } from '../options.js'
import type { Lease } from '../scheduler.js'
import type { AnyTool, DebugStep } from '../tool.js'
import type { Binding, Call, Presentation } from '../types.js'
import { acquireSlot, concurrencyClassOf, runExecute, type Execution } from './run-execute.js'

/*
 * Steps 8 to 11: wait for a slot, execute under the hard timeout, validate the output, encode
 * it for the transport, collect the debug steps.
 */

/**
 * Synchronous when a slot is free and `execute` returns a plain value: a promise (and the
 * microtask hops it costs) appears only where something really waits.
 */
export function scheduleAndExecute<App> (call: Call<App>): unknown {
  const lease = acquireSlots(call)
  if (!(lease instanceof Promise)) return executeWith(call, lease, undefined)
  const queuedAt = performance.now()
  return lease.then(granted => executeWith(call, granted, queuedAt))
}

/** Holding a slot (granted at once when `queuedAt` is undefined): run the tool, then check its output. */
function executeWith<App> (call: Call<App>, lease: Lease, queuedAt: number | undefined): unknown {
  const { env, tool, input, ctx, control, record } = call
  if (control.reason !== undefined) {
    lease.release()
    throw control.reason
  }
  const executeAt = performance.now()
  record.queueMs = queuedAt === undefined ? 0 : executeAt - queuedAt
  if (lease.fencingToken !== undefined) call.handle.fencingToken = lease.fencingToken
  record.executed = true
  record.touchedResources = resourcesOf(tool.touchedResourcesOf, input)
  record.mutatedResources = resourcesOf(tool.mutatedResourcesOf, input)
  const { options } = env
  const execution = runExecute(tool, input, ctx, control, tool.timeoutMs ?? options.defaultTimeoutMs, lease, options.abandonGraceMs)
  if (execution instanceof Promise) return execution.then(settled => outputOf(call, settled, executeAt))
  return outputOf(call, execution, executeAt)
}

function outputOf (call: Call, execution: Execution, executeAt: number): unknown {
  const { tool, record } = call
  record.executeMs = performance.now() - executeAt
  if (execution.type === 'aborted') {
    call.handle.late = execution.late
    throw execution.reason
  }
  if (execution.type === 'thrown') throw toolFailure(tool, execution.thrown)
  const output = parseOutput(tool, presented(call, execution.value))
  record.debugSteps = collectDebugSteps(tool, output)
  return output
}

/**
 * The tool's own limit first (when configured), then the domain's slot. Always in that order,
 * so two calls can never each hold what the other waits for.
 */
function acquireSlots<App> (call: Call<App>): Lease | Promise<Lease> {
  const { env, binding, tool, control } = call
  const { queueTimeoutMs, toolLimits } = env.options
  const limit = toolLimits[tool.id]
  if (limit === undefined) return acquireSlot(env.scheduler, binding.domain, concurrencyClassOf(tool), control, queueTimeoutMs)
  return withToolLimit(call, limit)
}

async function withToolLimit<App> (call: Call<App>, limit: ToolLimit): Promise<Lease> {
  const { env, binding, tool, control } = call
  const { queueTimeoutMs } = env.options
  const queue = `tool:${tool.id}`
  const enterQueue = (): (() => void) => env.queueShares.enter(queue, binding.idempotencyScope, limit.maxQueue)
  const toolLease = await acquireSlot(env.toolScheduler, queue, { type: 'group', toolId: tool.id, limit: limit.maxInFlight }, control, queueTimeoutMs, limit.maxQueue, enterQueue)
  try {
    const domainLease = await acquireSlot(env.scheduler, binding.domain, concurrencyClassOf(tool), control, queueTimeoutMs)
    return { release: () => { domainLease.release(); toolLease.release() }, fencingToken: domainLease.fencingToken }
  } catch (error) {
    toolLease.release()
    throw error
  }
}

/** Malformed input gives `[]`, by the contract of `touchedResourcesOf` / `mutatedResourcesOf`. */
function resourcesOf (of: ((input: unknown) => readonly string[]) | undefined, input: unknown): readonly string[] {
  if (of === undefined) return NONE
  try {
    const resources = of(input)
    return Array.isArray(resources) && resources.every(r => typeof r === 'string') ? resources : NONE
  } catch {
    return NONE
  }
}

/**
 * A `ToolError` is the tool failing on purpose (its status and code, as thrown), an
 * `UpstreamError` its upstream failing; anything else is a 500 with no internals.
 */
export function toolFailure (tool: AnyTool, thrown: unknown): ToolgateError {
  if (thrown instanceof ToolError) return thrown
  if (thrown instanceof UpstreamError) return thrown
  return new GatewayError('TOOLGATE_TOOL_FAILED', `"${tool.id}" failed`, {}, { cause: thrown })
}

/**
 * The output of a value a tool answered `withContent`, its blocks checked (a malformed block is
 * the tool's invalid output) and kept for the faces that carry them; any other value as it is.
 */
function presented (call: Call, value: unknown): unknown {
  if (!isWithContent(value)) return value
  const checked = checkContent(value.content)
  if (!checked.ok) throw new GatewayError('TOOLGATE_INVALID_OUTPUT', `"${call.tool.id}" answered a malformed ${checked.problem}`)
  const hasStructuredContent = 'structuredContent' in value
  call.handle.presentation = { content: checked.content, hasStructuredContent, ...(hasStructuredContent ? { structuredContent: value.structuredContent } : {}) }
  return value.output
}

export function parseOutput (tool: AnyTool, value: unknown): unknown {
  try {
    return tool.parseOutput(value)
  } catch (thrown) {
    throw new GatewayError('TOOLGATE_INVALID_OUTPUT', `"${tool.id}" returned output that does not match its schema`, {}, { cause: thrown })
  }
}

export function serializeOutput<App> (binding: Binding<App>, tool: AnyTool<App>, value: unknown): string | undefined {
  if (binding.serialize === undefined) return undefined
  try {
    return binding.serialize(value)
  } catch (thrown) {
    throw new GatewayError('TOOLGATE_INVALID_OUTPUT', `"${tool.id}" returned output the transport cannot carry: ${thrown instanceof Error ? thrown.message : 'unserializable'}`, {}, { cause: thrown })
  }
}

function collectDebugSteps (tool: AnyTool, output: unknown): readonly DebugStep[] {
  if (tool.debugSteps === undefined) return NONE
  const steps: DebugStep[] = []
  try {
    tool.debugSteps(output, { step: (name, data) => { steps.push({ name, data }) } })
  } catch (thrown) {
    steps.push({ name: 'debugSteps failed', data: thrown instanceof Error ? thrown.message : String(thrown) })
  }
  return steps
}

/** The presentation of a call, its blocks encoded for the transport within the same bound as the output. */
export function presentationOf<App> (binding: Binding<App>, tool: AnyTool<App>, presentation: Presentation | undefined): Presentation | undefined {
  if (presentation === undefined || !binding.contentBlocks) return undefined
  if (binding.serialize === undefined) return presentation
  return { ...presentation, body: serializeOutput(binding, tool, presentation.content) }
}
