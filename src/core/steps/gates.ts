import { GatewayError, ToolError, ToolgateError } from '../errors.js'
import { toInputIssues } from '../input-issues.js'
import { isZodSchema, parseStandard } from '../schema.js'
import { isThenable } from '../thenable.js'
import type { Binding, InvokeRequest, PipelineEnv } from '../types.js'
import type { AnyTool, ToolContext } from '../tool.js'

/*
 * The pipeline's steps before the idempotency key and the slot: which tool, may this caller
 * call it, is the input valid, do the mode gates let it through, does the tool's own authorize
 * agree.
 * Each refuses by throwing a GatewayError; nothing here runs the tool.
 */

export function findTool<App> (env: PipelineEnv, binding: Binding<App>, toolId: string): AnyTool<App> {
  const tool = env.tools.get(toolId) as AnyTool<App> | undefined
  if (tool === undefined || (tool.active !== undefined && !isActive(tool, binding.app))) {
    throw new GatewayError('TOOLGATE_NOT_FOUND', `no tool "${toolId}"`)
  }
  return tool
}

/** A throwing `active` is a defect of the tool; it reads as inactive rather than failing every listing. */
export function isActive<App> (tool: AnyTool<App>, app: App): boolean {
  try {
    return tool.active!(app) === true
  } catch {
    return false
  }
}

export function refuseWhenClosing (env: PipelineEnv): void {
  if (env.isClosing()) throw new GatewayError('TOOLGATE_UNAVAILABLE', 'the gateway is shutting down', { retryAfter: 5 })
}

export function checkPermission<App> (binding: Binding<App>, tool: AnyTool<App>): void {
  if (binding.isPermitted !== undefined && !binding.isPermitted(tool)) {
    throw new GatewayError('TOOLGATE_FORBIDDEN', `this principal may not call "${tool.id}"`)
  }
}

/** zod is checked first and parsed inline: the common kind keeps its fast path. */
export function parseInput (tool: AnyTool, raw: unknown): unknown {
  const schema = tool.inputSchema
  if (isZodSchema(schema)) {
    const parsed = schema.safeParse(raw)
    if (!parsed.success) {
      throw new GatewayError('TOOLGATE_INVALID_INPUT', `the input of "${tool.id}" does not match its schema`, { errors: toInputIssues(parsed.error) })
    }
    return parsed.data
  }
  const parsed = parseStandard(schema, raw)
  if (!parsed.ok) throw new GatewayError('TOOLGATE_INVALID_INPUT', `the input of "${tool.id}" does not match its schema`, { errors: parsed.issues })
  return parsed.value
}

export function checkModeGates<App> (binding: Binding<App>, tool: AnyTool<App>, request: InvokeRequest): void {
  if (binding.planMode && !tool.isReadOnly) {
    throw new GatewayError('TOOLGATE_PLAN_MODE', `"${tool.id}" is not read-only and plan mode runs read-only tools only`)
  }
  if (request.escalate === true) {
    // Not approved by the binding: the approval step turns it into a question to a person.
    if (tool.supportsEscalation !== true) throw new GatewayError('TOOLGATE_ESCALATION_UNSUPPORTED', `"${tool.id}" does not support escalation`)
  }
}

/**
 * `authorize` denies by throwing (or rejecting); settling with anything but `undefined` is a
 * tool defect. A synchronous `authorize` is checked synchronously: no promise unless it made one.
 */
export function runAuthorize<App> (tool: AnyTool<App>, input: unknown, ctx: ToolContext<App>): Promise<void> | undefined {
  let result: unknown
  try {
    result = tool.authorize(input, ctx)
  } catch (thrown) {
    throw denial(tool, thrown)
  }
  if (isThenable(result)) {
    return Promise.resolve(result).then(settled => { checkAuthorized(tool, settled) }, (thrown: unknown) => { throw denial(tool, thrown) })
  }
  checkAuthorized(tool, result)
  return undefined
}

function denial (tool: AnyTool, thrown: unknown): ToolgateError {
  if (thrown instanceof ToolgateError) return thrown
  return new GatewayError('TOOLGATE_DENIED', thrown instanceof Error && thrown.message !== '' ? thrown.message : `"${tool.id}" refused this call`)
}

function checkAuthorized (tool: AnyTool, result: unknown): void {
  if (result !== undefined) {
    throw new GatewayError('TOOLGATE_TOOL_BAD_DEFINITION', `authorize of "${tool.id}" settled with ${describe(result)}; it must settle with undefined and deny by throwing`)
  }
}

export function runResolve<App> (tool: AnyTool<App>, input: unknown, ctx: ToolContext<App>): unknown {
  if (tool.resolve === undefined) return input
  try {
    return tool.resolve(input, ctx)
  } catch (thrown) {
    if (thrown instanceof ToolError) throw thrown
    throw new GatewayError('TOOLGATE_DRY_RUN_REJECTED', thrown instanceof Error ? thrown.message : `"${tool.id}" rejected this input`)
  }
}

function describe (value: unknown): string {
  if (typeof value === 'string') return `the string ${JSON.stringify(value.slice(0, 40))}`
  if (value === null || typeof value !== 'object') return String(value)
  return Array.isArray(value) ? 'an array' : 'an object'
}
