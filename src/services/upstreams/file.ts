import { readFileSync } from 'node:fs'
import { dirname, resolve } from 'node:path'
import { z } from 'zod'
import { EFFECTS } from '../../core/tool.js'
import { TOOL_ID } from '../../core/define-tool.js'
import { ConfigError } from '../config.js'
import { issueText } from '../../core/limits/tool-limits.js'
import { LIMIT_NAME, OperatorLimitSchema } from '../../core/limits/declaration.js'
import { BundlesSchema, type BundleDeclaration } from '../bundles/declaration.js'
import { AuthSchema, authConfigOf, StdioAuthSchema, type AuthConfig, type PerPersonConfig } from './credentials/declaration.js'

/*
 * The upstreams file: the `mcpServers` object that Claude Desktop, Cursor and mcpo read,
 * unchanged, toolgate's `openapi` services (HTTP APIs described by an OpenAPI document), and
 * toolgate's own `rename` and `tools` (the operator's declarations). Read once at start-up;
 * anything unknown or wrong stops start-up naming the server or service and the key.
 */

/** How a call reaches a server in the era it speaks: `auto` asks it (`server/discover`), the others pin one. */
const Protocol = z.enum(['auto', '2025-11-25', '2026-07-28'])

/** What every server may add to the shared format: toolgate's own keys. */
const Ours = {
  /** Readiness (`/readyz`) waits for this server, and answers 503 while it is down. */
  required: z.boolean().default(false),
  /** Calls in flight to this server at once; more wait, in order, up to `maxQueue`. */
  maxInFlight: z.number().int().min(1).max(10_000).default(16),
  maxQueue: z.number().int().min(0).max(100_000).default(256),
  protocol: Protocol.default('auto'),
  /** Skip this server (Cline and Roo write it). */
  disabled: z.boolean().default(false),
}

const StdioServer = z.object({
  type: z.literal('stdio').optional(),
  command: z.string().min(1),
  args: z.array(z.string()).default([]),
  env: z.record(z.string(), z.string()).default({}),
  cwd: z.string().min(1).optional(),
  /** One child per person, their token in its environment (see credentials/). */
  auth: StdioAuthSchema.optional(),
  ...Ours,
}).strict()

/** Every `type` spelling the common clients write for Streamable HTTP, and `sse` for the old HTTP+SSE transport. */
const REMOTE_TYPES = ['http', 'streamable-http', 'streamable_http', 'streamableHttp', 'sse'] as const

const RemoteServer = z.object({
  type: z.enum(REMOTE_TYPES).optional(),
  url: z.string().min(1),
  headers: z.record(z.string(), z.string()).default({}),
  /** Who the server sees: the gateway's own OAuth token, the caller's exchanged, or the caller asserted (see credentials/). */
  auth: AuthSchema.optional(),
  ...Ours,
}).strict()

const OpenApiService = z.object({
  /** A path (relative to the upstreams file) or an http(s) URL; read at start-up and on every reload. */
  document: z.string().min(1),
  /** Where calls go; absent: the document's first `servers` entry, when it is an absolute URL. */
  baseUrl: z.string().min(1).optional(),
  /** Sent with every call (the service's credentials); never shown to callers. */
  headers: z.record(z.string(), z.string()).default({}),
  auth: AuthSchema.optional(),
  /** operationIds or globs over them; absent: every operation. */
  include: z.array(z.string().min(1)).optional(),
  exclude: z.array(z.string().min(1)).default([]),
  maxInFlight: Ours.maxInFlight,
  maxQueue: Ours.maxQueue,
  disabled: Ours.disabled,
}).strict()

/** A CEL expression, or a constant. */
const Rule = z.union([z.boolean(), z.string().min(1).max(4096)])

/** The operator's declaration of upstream tools, by id or glob: it always wins over the upstream's hints. */
const OperatorDeclarationSchema = z.object({
  kind: z.string().regex(/^[a-z][a-z0-9_-]{0,63}$/, 'a lowercase word').optional(),
  description: z.string().trim().min(1).optional(),
  shortDescription: z.string().trim().min(1).optional(),
  effects: z.array(z.enum(EFFECTS)).optional(),
  isReadOnly: z.boolean().optional(),
  isConcurrencySafe: z.boolean().optional(),
  selfConcurrency: z.number().int().min(1).optional(),
  timeoutMs: z.number().int().min(1).max(2 ** 31 - 1).optional(),
  requiresIdempotencyKey: z.boolean().optional(),
  active: Rule.optional(),
  authorize: Rule.optional(),
  requiresApproval: Rule.optional(),
}).strict()
export type OperatorDeclaration = z.output<typeof OperatorDeclarationSchema>

/** The operator's word on an upstream's prompts (by id or glob) and resources (by URI or glob): who sees them. */
const FeatureDeclarationSchema = z.object({
  active: Rule.optional(),
}).strict()
export type FeatureDeclaration = z.output<typeof FeatureDeclarationSchema>

const SERVER_NAME = /^[A-Za-z][\w.-]{0,63}$/
/** `server/tool`: the server's key, a slash, the upstream's own tool name. */
const RENAME_KEY = /^[^/]+\/.+$/
const TOOLS_KEY = /^[a-z0-9_*?]+$/

const FileSchema = z.object({
  mcpServers: z.record(z.string().regex(SERVER_NAME, 'a server name: a letter, then letters, digits, _, . or -'), z.unknown()).default({}),
  openapi: z.record(z.string().regex(SERVER_NAME, 'a service name: a letter, then letters, digits, _, . or -'), z.unknown()).default({}),
  rename: z.record(z.string().regex(RENAME_KEY, '"server/tool": the server\'s key, a slash, the tool\'s own name'), z.string().regex(TOOL_ID, `a tool id matching ${String(TOOL_ID)}`)).default({}),
  tools: z.record(z.string().regex(TOOLS_KEY, 'a tool id or a glob of them (lowercase letters, digits, _, * and ?)'), OperatorDeclarationSchema).default({}),
  prompts: z.record(z.string().regex(TOOLS_KEY, 'a prompt id or a glob of them (lowercase letters, digits, _, * and ?)'), FeatureDeclarationSchema).default({}),
  resources: z.record(z.string().min(1).max(2048), FeatureDeclarationSchema).default({}),
  bundles: BundlesSchema,
  limits: z.record(z.string().regex(LIMIT_NAME, 'a limit name: a lowercase letter, then letters, digits, _ or -'), OperatorLimitSchema(z.string().regex(TOOLS_KEY, 'a tool id or a glob of them (lowercase letters, digits, _, * and ?)'), z.enum(EFFECTS))).default({}),
}).strict()

export type OperatorLimitSpec = z.output<typeof FileSchema>['limits'][string]

export interface StdioServerConfig {
  readonly name: string
  readonly transport: 'stdio'
  readonly command: string
  readonly args: readonly string[]
  readonly env: Readonly<Record<string, string>>
  readonly cwd?: string
  /** One child per person, their token in its environment; absent: one child for everyone. */
  readonly perPerson?: PerPersonConfig
  readonly required: boolean
  readonly maxInFlight: number
  readonly maxQueue: number
  readonly protocol: z.output<typeof Protocol>
  /** Every value taken from the gateway's environment: never logged, never shown. */
  readonly secrets: readonly string[]
}

export interface RemoteServerConfig {
  readonly name: string
  readonly transport: 'http' | 'sse'
  readonly url: string
  readonly headers: Readonly<Record<string, string>>
  /** Absent: `headers` alone (the static mode). */
  readonly auth?: AuthConfig
  readonly required: boolean
  readonly maxInFlight: number
  readonly maxQueue: number
  readonly protocol: z.output<typeof Protocol>
  readonly secrets: readonly string[]
}

export type ServerConfig = StdioServerConfig | RemoteServerConfig

/** An HTTP API fronted through its OpenAPI document. */
export interface OpenApiServiceConfig {
  readonly name: string
  /** An absolute path or an http(s) URL. */
  readonly document: string
  /** Absent: taken from the document's `servers`. */
  readonly baseUrl?: string
  readonly headers: Readonly<Record<string, string>>
  readonly auth?: AuthConfig
  readonly include?: readonly string[]
  readonly exclude: readonly string[]
  readonly maxInFlight: number
  readonly maxQueue: number
  readonly secrets: readonly string[]
}

export interface UpstreamsFile {
  readonly path: string
  readonly servers: readonly ServerConfig[]
  readonly services: readonly OpenApiServiceConfig[]
  readonly rename: Readonly<Record<string, string>>
  readonly tools: Readonly<Record<string, OperatorDeclaration>>
  /** Who sees which upstream prompt, by prompt id or glob. */
  readonly prompts: Readonly<Record<string, FeatureDeclaration>>
  /** Who sees which upstream resource, by URI (or resource template) or glob. */
  readonly resources: Readonly<Record<string, FeatureDeclaration>>
  /** The operator's rates, quotas and budgets, by name (docs/limits.md). */
  readonly limits: Readonly<Record<string, OperatorLimitSpec>>
  /** Curated tool sets served at their own addresses, by name (docs/bundles.md). */
  readonly bundles: Readonly<Record<string, BundleDeclaration>>
}

/** Read and check the upstreams file; `${NAME}` is taken from `env`. Throws a `ConfigError` naming the server and key. */
export function readUpstreamsFile (path: string, env: NodeJS.ProcessEnv = process.env): UpstreamsFile {
  let raw: unknown
  try {
    raw = JSON.parse(readFileSync(path, 'utf8'))
  } catch (error) {
    throw new ConfigError(`upstreams file ${path}: ${(error as Error).message}`)
  }
  return parseUpstreams(raw, path, env)
}

/** @internal exported for its tests, not for the package */
export function parseUpstreams (raw: unknown, path: string, env: NodeJS.ProcessEnv): UpstreamsFile {
  const fail = (where: string, problem: string): never => { throw new ConfigError(`upstreams file ${path}: ${where}: ${problem}`) }
  const file = FileSchema.safeParse(raw)
  if (!file.success) {
    const issue = file.error.issues[0]!
    return fail(issue.path.join('.') || '(root)', issueText(issue))
  }
  const servers: ServerConfig[] = []
  for (const [name, value] of Object.entries(file.data.mcpServers)) {
    const server = serverOf(name, value, path, env, fail)
    if (server !== undefined) servers.push(server)
  }
  const services: OpenApiServiceConfig[] = []
  for (const [name, value] of Object.entries(file.data.openapi)) {
    // One name space: `rename` keys and tool ids start with the name, whichever kind it is.
    if (Object.hasOwn(file.data.mcpServers, name)) fail(`openapi.${name}`, `"${name}" is also a server in mcpServers; give each upstream its own name`)
    const service = serviceOf(name, value, path, env, fail)
    if (service !== undefined) services.push(service)
  }
  const names = new Set([...Object.keys(file.data.mcpServers), ...Object.keys(file.data.openapi)])
  for (const key of Object.keys(file.data.rename)) {
    const server = key.slice(0, key.indexOf('/'))
    if (!names.has(server)) fail(`rename.${key}`, `there is no server "${server}" in mcpServers or openapi`)
  }
  return { path, servers, services, rename: file.data.rename, tools: file.data.tools, prompts: file.data.prompts, resources: file.data.resources, limits: file.data.limits, bundles: file.data.bundles }
}

function serviceOf (name: string, value: unknown, path: string, env: NodeJS.ProcessEnv, fail: (where: string, problem: string) => never): OpenApiServiceConfig | undefined {
  const at = `openapi.${name}`
  const parsed = OpenApiService.safeParse(value)
  if (!parsed.success) {
    const issue = parsed.error.issues[0]!
    return fail(`${at}${issue.path.length === 0 ? '' : '.' + issue.path.join('.')}`, issueText(issue))
  }
  const service = parsed.data
  if (service.disabled) return undefined
  const secrets: string[] = []
  const expand = (text: string, where: string): string => expandVariables(text, env, variable => fail(`${at}.${where}`, `\${${variable}} is not set in the gateway's environment`), secrets)
  const documentText = expand(service.document, 'document')
  const document = /^https?:\/\//i.test(documentText) ? documentText : resolve(dirname(path), documentText)
  let baseUrl: string | undefined
  if (service.baseUrl !== undefined) {
    baseUrl = expand(service.baseUrl, 'baseUrl')
    const problem = baseUrlProblem(baseUrl)
    if (problem !== undefined) fail(`${at}.baseUrl`, problem)
    if (new URL(baseUrl).password !== '') secrets.push(baseUrl)
  }
  const headers: Record<string, string> = {}
  for (const [key, text] of Object.entries(service.headers)) {
    if (!HEADER_NAME.test(key)) fail(`${at}.headers.${key}`, 'is not a header name')
    headers[key] = expand(text, `headers.${key}`)
    if (/[\r\n\0]/.test(headers[key])) fail(`${at}.headers.${key}`, 'a header value cannot hold a line break')
    if (headers[key].length >= 8) secrets.push(headers[key])
  }
  const auth = service.auth === undefined ? undefined : authConfigOf(service.auth, at, expand, fail, secrets)
  if (auth?.type === 'link' && auth.client.issuer === undefined) fail(`${at}.auth.issuer`, 'is needed for a service (a remote MCP server\'s is found from its metadata)')
  return {
    name,
    document,
    ...(baseUrl === undefined ? {} : { baseUrl }),
    headers,
    ...(auth === undefined ? {} : { auth }),
    ...(service.include === undefined ? {} : { include: service.include }),
    exclude: service.exclude,
    maxInFlight: service.maxInFlight,
    maxQueue: service.maxQueue,
    secrets,
  }
}

const HEADER_NAME = /^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/

/** Why `url` cannot be a service's base URL, or undefined: http(s), no query, no fragment (every call's URL starts with it). */
export function baseUrlProblem (url: string): string | undefined {
  let parsed: URL
  try {
    parsed = new URL(url)
  } catch {
    return 'is not a URL'
  }
  if (parsed.protocol !== 'http:' && parsed.protocol !== 'https:') return 'must be an http:// or https:// URL'
  if (parsed.search !== '' || parsed.hash !== '') return 'cannot have a query or a fragment'
  return undefined
}

function serverOf (name: string, value: unknown, path: string, env: NodeJS.ProcessEnv, fail: (where: string, problem: string) => never): ServerConfig | undefined {
  const at = `mcpServers.${name}`
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return fail(at, 'must be an object with "command" (stdio) or "url" (remote)')
  const isRemote = 'url' in value || ((value as { type?: unknown }).type !== undefined && (value as { type?: unknown }).type !== 'stdio')
  if (isRemote && 'command' in value) return fail(at, 'has both "command" and "url": a server is either a command (stdio) or a URL (remote)')
  const parsed = (isRemote ? RemoteServer : StdioServer).safeParse(value)
  if (!parsed.success) {
    const issue = parsed.error.issues[0]!
    return fail(`${at}${issue.path.length === 0 ? '' : '.' + issue.path.join('.')}`, issueText(issue))
  }
  if (parsed.data.disabled) return undefined
  const secrets: string[] = []
  const expand = (text: string, where: string): string => expandVariables(text, env, name => fail(`${at}.${where}`, `\${${name}} is not set in the gateway's environment`), secrets)
  const common = { name, required: parsed.data.required, maxInFlight: parsed.data.maxInFlight, maxQueue: parsed.data.maxQueue, protocol: parsed.data.protocol, secrets }
  if ('command' in parsed.data) {
    const stdio = parsed.data
    const envOut: Record<string, string> = {}
    for (const [key, text] of Object.entries(stdio.env)) envOut[key] = expand(text, `env.${key}`)
    // Every value the file gives a child may be a credential, even one written in the file itself.
    for (const text of Object.values(envOut)) if (text.length >= 8) secrets.push(text)
    let perPerson: PerPersonConfig | undefined
    if (stdio.auth !== undefined) {
      const { env: variable, maxChildren, idleSeconds, ...auth } = stdio.auth
      perPerson = { auth: authConfigOf(auth, at, expand, fail, secrets) as PerPersonConfig['auth'], env: variable, maxChildren, idleMs: idleSeconds * 1000 }
      if (perPerson.auth.type === 'link' && perPerson.auth.client.issuer === undefined) fail(`${at}.auth.issuer`, 'is needed for a stdio server (a remote MCP server\'s is found from its metadata)')
    }
    return {
      ...common,
      ...(perPerson === undefined ? {} : { perPerson }),
      transport: 'stdio',
      command: expand(stdio.command, 'command'),
      args: stdio.args.map((arg, i) => expand(arg, `args.${i}`)),
      env: envOut,
      ...(stdio.cwd === undefined ? {} : { cwd: resolve(dirname(path), expand(stdio.cwd, 'cwd')) }),
    }
  }
  const remote = parsed.data
  const url = expand(remote.url, 'url')
  let parsedUrl: URL
  try {
    parsedUrl = new URL(url)
  } catch {
    return fail(`${at}.url`, 'is not a URL')
  }
  if (parsedUrl.protocol !== 'http:' && parsedUrl.protocol !== 'https:') fail(`${at}.url`, 'must be an http:// or https:// URL')
  const headers: Record<string, string> = {}
  for (const [key, text] of Object.entries(remote.headers)) {
    headers[key] = expand(text, `headers.${key}`)
    if (headers[key].length >= 8) secrets.push(headers[key])
  }
  // A token in the URL itself (`?key=...`) is as secret as a header.
  if (parsedUrl.search !== '' || parsedUrl.password !== '') secrets.push(url)
  const auth = remote.auth === undefined ? undefined : authConfigOf(remote.auth, at, expand, fail, secrets)
  return { ...common, transport: remote.type === 'sse' ? 'sse' : 'http', url, headers, ...(auth === undefined ? {} : { auth }) }
}

/** `${NAME}` from the environment; an unset (or empty) one is refused through `missing`. */
function expandVariables (text: string, env: NodeJS.ProcessEnv, missing: (name: string) => never, secrets: string[]): string {
  return text.replace(/\$\{([A-Za-z_][A-Za-z0-9_]*)\}/g, (_match, name: string) => {
    const value = env[name]
    if (value === undefined || value === '') return missing(name)
    secrets.push(value)
    return value
  })
}

/** `text` with every one of `secrets` taken out: what logs, statuses and errors may show. */
export function redact (text: string, secrets: readonly string[]): string {
  let out = text
  for (const secret of secrets) if (secret !== '') out = out.split(secret).join('[redacted]')
  return out
}

