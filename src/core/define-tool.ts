import { ToolDefinitionError } from './errors.js'
import { outputParserOf, snapshotToolSchema, type ToolSchema } from './schema.js'
import { toolErrorsOf } from './tool-errors.js'
import { toolLimitsOf } from './limits/tool-limits.js'
import { DEFINED, EFFECTS, type AnyTool, type Effect, type Tool, type IntentDeclaration, type ToolDeclaration, type ToolOrigin } from './tool.js'

/** What a tool id may be: the name a model calls, a route segment, a metrics label. */
export const TOOL_ID = /^[a-z][a-z0-9_]{0,63}$/
const ID = TOOL_ID
const KIND = /^[a-z][a-z0-9_-]{0,63}$/
const REQUIRED_FUNCTIONS = ['authorize', 'execute'] as const
const OPTIONAL_FUNCTIONS = ['parseOutput', 'active', 'resolve', 'debugSteps', 'touchedResourcesOf', 'mutatedResourcesOf'] as const
const OPTIONAL_BOOLEANS = ['interactive', 'supportsEscalation', 'requiresIdempotencyKey'] as const
const KNOWN_FIELDS = new Set<string>([
  'id', 'kind', 'description', 'shortDescription', 'inputSchema', 'outputSchema', 'effects', 'errors',
  'isReadOnly', 'isConcurrencySafe', 'selfConcurrency', 'timeoutMs', 'asIntent', 'origin',
  ...REQUIRED_FUNCTIONS, ...OPTIONAL_FUNCTIONS, ...OPTIONAL_BOOLEANS, 'requiresApproval', 'limits',
])

export interface DefineOptions {
  /** Where the declaration came from (a file), named in every error. */
  readonly source?: string
}

/**
 * Validate one tool declaration and return a frozen, detached copy of it: handlers bound to
 * the declaration, schemas snapshotted so later mutation cannot widen what the tool accepts,
 * effects sorted. Fails with a {@link ToolDefinitionError} naming the tool, file and field.
 * Schemas may be zod, a Standard Schema with Standard JSON Schema, or `defineSchema(...)`.
 *
 * @example
 * import { z } from 'zod'
 * import { defineTool } from 'toolgate'
 * export default defineTool({
 *   id: 'add',
 *   kind: 'compute',
 *   description: 'Add two numbers.',
 *   inputSchema: z.object({ a: z.number(), b: z.number() }),
 *   outputSchema: z.object({ sum: z.number() }),
 *   isReadOnly: true,
 *   isConcurrencySafe: true,
 *   authorize () {},
 *   execute: ({ a, b }) => ({ sum: a + b }),
 * })
 */
export function defineTool<In extends ToolSchema, Out extends ToolSchema, App = unknown> (
  declaration: ToolDeclaration<In, Out, App>,
  options: DefineOptions = {},
): Tool<In, Out, App> {
  if (typeof declaration !== 'object' || declaration === null) {
    throw new ToolDefinitionError('?', '(declaration)', 'must be an object', options.source)
  }
  const d = declaration as ToolDeclaration<In, Out, App> & Record<string, unknown>
  const fail = (field: string, problem: string): never => {
    throw new ToolDefinitionError(typeof d.id === 'string' ? d.id : '?', field, problem, options.source)
  }

  if (typeof d.id !== 'string' || !ID.test(d.id)) fail('id', `must match ${String(ID)}, got ${JSON.stringify(d.id)}`)
  for (const key of Object.keys(d)) if (!KNOWN_FIELDS.has(key)) fail(key, 'is not a known declaration field')
  if (typeof d.kind !== 'string' || !KIND.test(d.kind)) fail('kind', `must be a lowercase word matching ${String(KIND)}`)
  if (typeof d.description !== 'string' || d.description.trim() === '') fail('description', 'must be a non-empty string')
  if (d.shortDescription !== undefined && (typeof d.shortDescription !== 'string' || d.shortDescription.trim() === '')) {
    fail('shortDescription', 'must be a non-empty string when present')
  }
  const inputSchema = snapshotToolSchema(d.inputSchema, problem => fail('inputSchema', problem))
  const outputSchema = snapshotToolSchema(d.outputSchema, problem => fail('outputSchema', problem))
  for (const field of ['isReadOnly', 'isConcurrencySafe'] as const) {
    if (typeof d[field] !== 'boolean') fail(field, 'must be a boolean')
  }
  for (const field of OPTIONAL_BOOLEANS) {
    if (d[field] !== undefined && typeof d[field] !== 'boolean') fail(field, 'must be a boolean when present')
  }
  for (const field of REQUIRED_FUNCTIONS) if (typeof d[field] !== 'function') fail(field, 'must be a function')
  for (const field of OPTIONAL_FUNCTIONS) {
    if (d[field] !== undefined && typeof d[field] !== 'function') fail(field, 'must be a function when present')
  }
  if (d.requiresApproval !== undefined && typeof d.requiresApproval !== 'boolean' && typeof d.requiresApproval !== 'function') {
    fail('requiresApproval', 'must be a boolean or a function (input, ctx) => boolean when present')
  }
  const effects = checkEffects(d.effects, fail)
  const errors = toolErrorsOf(d.errors, fail)
  checkTimeout(d.timeoutMs, d.interactive === true, fail)
  checkSelfConcurrency(declaration, fail)
  const asIntent = intentOf(d.asIntent, fail)
  const origin = originOf(d.origin, fail)
  const limits = toolLimitsOf(d.id, d.limits, inputSchema, fail)

  const bind = <F>(fn: F): F => (typeof fn === 'function' ? fn.bind(declaration) as F : fn)
  const tool: Record<string | symbol, unknown> = {
    id: d.id,
    kind: d.kind,
    description: d.description,
    shortDescription: d.shortDescription,
    inputSchema,
    outputSchema,
    parseOutput: d.parseOutput === undefined ? outputParserOf(outputSchema) : bind(d.parseOutput),
    effects: Object.freeze(effects),
    effectsLabel: effects.length === 0 ? 'none' : effects.join(','),
    errors,
    isReadOnly: d.isReadOnly,
    isConcurrencySafe: d.isConcurrencySafe,
    timeoutMs: d.timeoutMs,
    interactive: d.interactive === true,
    supportsEscalation: d.supportsEscalation === true,
    requiresIdempotencyKey: d.requiresIdempotencyKey === true,
    requiresApproval: typeof d.requiresApproval === 'function' ? bind(d.requiresApproval) : d.requiresApproval === true,
    asIntent,
    origin,
    limits,
    source: options.source,
    [DEFINED]: true,
  }
  for (const field of [...REQUIRED_FUNCTIONS, 'active', 'resolve', 'debugSteps', 'touchedResourcesOf', 'mutatedResourcesOf'] as const) {
    tool[field] = bind(d[field])
  }
  copySelfConcurrency(declaration, tool)
  return Object.freeze(tool) as unknown as Tool<In, Out, App>
}

function checkEffects (value: unknown, fail: (field: string, problem: string) => never): Effect[] {
  if (value === undefined) return []
  if (!Array.isArray(value)) return fail('effects', `must be an array of ${EFFECTS.join(', ')}`)
  for (const effect of value) {
    if (!(EFFECTS as readonly unknown[]).includes(effect)) fail('effects', `has unknown effect ${JSON.stringify(effect)}; known: ${EFFECTS.join(', ')}`)
  }
  return [...new Set(value as Effect[])].sort()
}

/** `true`, or an object with an optional model-visible `description` of the intent; frozen copy. */
function intentOf (value: unknown, fail: (field: string, problem: string) => never): IntentDeclaration | undefined {
  if (value === undefined || value === false) return undefined
  if (value === true) return Object.freeze({})
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return fail('asIntent', 'must be true or an object { description?: string }')
  const { description, ...rest } = value as Record<string, unknown>
  for (const key of Object.keys(rest)) fail('asIntent', `has unknown field "${key}"; known: description`)
  if (description !== undefined && (typeof description !== 'string' || description.trim() === '')) fail('asIntent', 'description must be a non-empty string when present')
  return Object.freeze(description === undefined ? {} : { description: description as string })
}

/** A frozen copy: what the listings say of a fronted tool cannot change after it is defined. */
function originOf (value: unknown, fail: (field: string, problem: string) => never): ToolOrigin | undefined {
  if (value === undefined) return undefined
  const { type, server, name, declaredBy, method, path, credential } = (typeof value === 'object' && value !== null ? value : {}) as Record<string, unknown>
  if (typeof type !== 'string' || typeof server !== 'string' || typeof name !== 'string' || typeof declaredBy !== 'object' || declaredBy === null) {
    return fail('origin', 'must be { type, server, name, declaredBy } when present')
  }
  const by: Record<string, 'operator' | 'upstream' | 'default'> = {}
  for (const [field, who] of Object.entries(declaredBy)) {
    if (who !== 'operator' && who !== 'upstream' && who !== 'default') fail('origin', `declaredBy.${field} must be operator, upstream or default`)
    by[field] = who as 'operator' | 'upstream' | 'default'
  }
  if ((method !== undefined && typeof method !== 'string') || (path !== undefined && typeof path !== 'string')) fail('origin', 'method and path must be strings when present')
  if (credential !== undefined && credential !== 'client_credentials' && credential !== 'token_exchange' && credential !== 'link' && credential !== 'identity') fail('origin', 'credential must be client_credentials, token_exchange, link or identity when present')
  return Object.freeze({
    type, server, name,
    ...(method === undefined ? {} : { method: method as string }),
    ...(path === undefined ? {} : { path: path as string }),
    ...(credential === undefined ? {} : { credential: credential as NonNullable<ToolOrigin['credential']> }),
    declaredBy: Object.freeze(by),
  })
}

function checkTimeout (value: unknown, interactive: boolean, fail: (field: string, problem: string) => never): void {
  if (value === undefined) return
  if (value === Infinity) {
    if (!interactive) fail('timeoutMs', 'may be Infinity only for a tool declared interactive: true')
    return
  }
  if (typeof value !== 'number' || !Number.isFinite(value) || value <= 0) fail('timeoutMs', `must be a positive number of milliseconds, got ${describeValue(value)}`)
  if ((value as number) > 2 ** 31 - 1) fail('timeoutMs', 'must be at most 2147483647 ms (the timer limit), or Infinity for interactive tools')
}

function checkSelfConcurrency (declaration: object, fail: (field: string, problem: string) => never): void {
  const descriptor = Object.getOwnPropertyDescriptor(declaration, 'selfConcurrency')
  if (descriptor === undefined || descriptor.get !== undefined) return
  const value: unknown = descriptor.value
  if (value === undefined || typeof value === 'function') return
  if (typeof value !== 'number' || !Number.isInteger(value) || value < 1) {
    fail('selfConcurrency', `must be a whole number >= 1 or a getter, got ${describeValue(value)}`)
  }
}

/** A getter (accessor or function) stays live: the scheduler reads it at every call. */
function copySelfConcurrency (declaration: object, tool: Record<string, unknown>): void {
  const descriptor = Object.getOwnPropertyDescriptor(declaration, 'selfConcurrency')
  if (descriptor === undefined) return
  if (descriptor.get !== undefined) {
    const get = descriptor.get.bind(declaration) as () => unknown
    Object.defineProperty(tool, 'selfConcurrency', { get, enumerable: true })
  } else {
    const value: unknown = descriptor.value
    tool.selfConcurrency = typeof value === 'function' ? (value as () => unknown).bind(declaration) : value
  }
}

/** The concurrency limit of a tool right now; anything invalid reads as 1 (plain exclusive). */
export function currentSelfConcurrency (tool: AnyTool): number {
  let value: unknown
  try {
    value = typeof tool.selfConcurrency === 'function' ? tool.selfConcurrency() : tool.selfConcurrency
  } catch {
    return 1
  }
  return typeof value === 'number' && Number.isInteger(value) && value >= 1 ? value : 1
}

/** A declared value as a message shows it: JSON where it has one (`String` of an object is `[object Object]`). */
function describeValue (value: unknown): string {
  if (typeof value === 'object' && value !== null) return JSON.stringify(value) ?? 'an object'
  return String(value as string | number | boolean | bigint | symbol | undefined)
}
