import { GatewayError, ToolgateError } from '../../core/errors.js'
import type { InvokeResult } from '../../core/types.js'
import { JSON_RPC, JsonRpcError } from './json-rpc.js'

/*
 * MCP's resources and prompts, served from the upstream servers the gateway fronts: listings
 * as one caller may see them, and reads and gets that run as calls through the pipeline (the
 * adapter's `run`). Protocol shape only: which server answers, and the rules, are the caller's.
 */

/** One prompt argument as its server declares it. */
interface PromptArgument {
  readonly name: string
  readonly required?: boolean
}

/** What one caller may see and use of the fronted servers' resources and prompts. */
export interface McpFeatures {
  resources (): readonly object[]
  templates (): readonly object[]
  prompts (): readonly object[]
  /** The read of `uri`, run as a call; undefined when no server this caller may use has it. */
  resource (uri: string): (() => Promise<InvokeResult>) | undefined
  /** The prompt `id`: its declared arguments, and its get run as a call; undefined when unknown to this caller. */
  prompt (id: string): { readonly arguments: readonly PromptArgument[], readonly run: (args: Record<string, string>) => Promise<InvokeResult> } | undefined
  /** The problem object REST would answer for this failure. */
  problemOf (error: ToolgateError): Record<string, unknown>
}

/** MCP's "resource not found". */
const RESOURCE_NOT_FOUND = -32002
/** The longest URI or prompt name taken. */
const MAX_NAME = 8192

export function listResources (features: McpFeatures | undefined): string {
  return JSON.stringify({ resources: features?.resources() ?? [] })
}

export function listTemplates (features: McpFeatures | undefined): string {
  return JSON.stringify({ resourceTemplates: features?.templates() ?? [] })
}

export function listPrompts (features: McpFeatures | undefined): string {
  return JSON.stringify({ prompts: features?.prompts() ?? [] })
}

/** `resources/read`: the server's result as it sent it (`contents`), after the pipeline's checks. */
export async function readResource (params: Record<string, unknown>, features: McpFeatures | undefined): Promise<string> {
  const { uri } = params
  if (typeof uri !== 'string' || uri === '' || uri.length > MAX_NAME) throw invalid('/params/uri', `params.uri must be a string of 1 to ${MAX_NAME} characters`)
  const run = features?.resource(uri)
  if (run === undefined) throw new JsonRpcError(RESOURCE_NOT_FOUND, `resource not found: ${uri}`, { uri })
  // The server's own refusal of the URI (not found, or invalid params as some servers say it) is not found.
  const unknown = (error: GatewayError): boolean => error.code === 'TOOLGATE_NOT_FOUND' || (error.code === 'TOOLGATE_INVALID_INPUT' && error.extensions.upstream !== undefined)
  return await answer(run, features!, error => unknown(error) ? new JsonRpcError(RESOURCE_NOT_FOUND, `resource not found: ${uri}`, { uri }) : undefined)
}

/** `prompts/get`: the arguments checked against the prompt's own declaration first, then the server's messages as it sent them. */
export async function getPrompt (params: Record<string, unknown>, features: McpFeatures | undefined): Promise<string> {
  const { name } = params
  const args = params.arguments ?? {}
  if (typeof name !== 'string' || name === '' || name.length > MAX_NAME) throw invalid('/params/name', `params.name must be a string of 1 to ${MAX_NAME} characters`)
  const prompt = features?.prompt(name)
  if (prompt === undefined) throw new JsonRpcError(JSON_RPC.invalidParams, `unknown prompt: ${name}`)
  const checked = checkArguments(args, prompt.arguments)
  return await answer(async () => await prompt.run(checked), features!, () => undefined)
}

/** MCP: string values only, every required argument present, none the prompt does not declare. */
function checkArguments (args: unknown, declared: readonly PromptArgument[]): Record<string, string> {
  if (typeof args !== 'object' || args === null || Array.isArray(args)) throw invalid('/params/arguments', 'params.arguments must be an object of strings')
  const errors: Array<{ pointer: string, message: string, code: string }> = []
  const known = new Set(declared.map(argument => argument.name))
  for (const [key, value] of Object.entries(args)) {
    if (!known.has(key)) errors.push({ pointer: `/params/arguments/${pointerPart(key)}`, message: `the prompt takes no argument "${key}"`, code: 'unrecognized_keys' })
    else if (typeof value !== 'string') errors.push({ pointer: `/params/arguments/${pointerPart(key)}`, message: `argument "${key}" must be a string`, code: 'invalid_type' })
  }
  for (const argument of declared) {
    if (argument.required === true && !Object.hasOwn(args, argument.name)) errors.push({ pointer: `/params/arguments/${pointerPart(argument.name)}`, message: `argument "${argument.name}" is required`, code: 'invalid_type' })
  }
  if (errors.length > 0) throw new JsonRpcError(JSON_RPC.invalidParams, errors.map(error => error.message).join('; '), { errors })
  return args as Record<string, string>
}

/**
 * The call's result JSON, or its failure as a JSON-RPC error: invalid input is invalid params,
 * what `special` maps is that, anything else an internal error carrying the problem REST would
 * answer (its status, code, `Retry-After` seconds).
 */
async function answer (run: () => Promise<InvokeResult>, features: McpFeatures, special: (error: GatewayError) => JsonRpcError | undefined): Promise<string> {
  let result: InvokeResult
  try {
    result = await run()
  } catch (error) {
    if (!(error instanceof ToolgateError)) throw error
    const mapped = error instanceof GatewayError ? special(error) : undefined
    if (mapped !== undefined) throw mapped
    if (error.code === 'TOOLGATE_INVALID_INPUT') throw new JsonRpcError(JSON_RPC.invalidParams, error.message, { errors: error.extensions.errors })
    throw new JsonRpcError(JSON_RPC.internalError, error.message, { problem: features.problemOf(error) })
  }
  // The operator's approval rules may name a read's tool; a read has no way to wait for a person.
  if (result.approval !== undefined) throw new JsonRpcError(JSON_RPC.internalError, 'this read needs a person\'s approval, which resources/read and prompts/get cannot wait for', { approvalId: result.approval.id })
  return result.body ?? JSON.stringify(result.value ?? null)
}

function invalid (pointer: string, message: string): JsonRpcError {
  return new JsonRpcError(JSON_RPC.invalidParams, message, { errors: [{ pointer, message, code: 'invalid_type' }] })
}

function pointerPart (key: string): string {
  return key.replaceAll('~', '~0').replaceAll('/', '~1')
}
