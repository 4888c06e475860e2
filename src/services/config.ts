import { readFileSync } from 'node:fs'
import { isIP } from 'node:net'
import { z } from 'zod'
import { TOOL_ID } from '../core/define-tool.js'
import { CORE_DEFAULTS } from '../core/options.js'
import { DEFAULT_INPUT_BOUNDS, MAX_DEPTH_BOUND, type InputBounds } from '../core/input-bounds.js'
import { isLoopback } from './loopback.js'

const boolFromEnv = z.union([z.boolean(), z.enum(['true', 'false', '1', '0']).transform(v => v === 'true' || v === '1')])
const intFromEnv = (min: number, max: number) => z.coerce.number().int().min(min).max(max)
const list = z.union([z.array(z.string()), z.string().transform(v => v.split(',').map(s => s.trim()).filter(s => s !== ''))])
/** One trusted proxy: an IPv4 or IPv6 address, or a CIDR range of them. */
const proxyAddress = z.string().refine(isAddressOrRange, 'an IP address or a CIDR range (10.0.0.0/8, fd00::/8)')
/**
 * `TRUST_PROXY`: off (`false`, the default), the number of proxy hops in front (the client is
 * that many entries from the end of `X-Forwarded-For`), or the proxies' addresses and ranges
 * (only a peer among them is believed). Never `true`: trusting every peer lets any client
 * choose its own address.
 */
const trustProxy = z.union([
  z.literal(false),
  z.literal(0).transform(() => false as const),
  z.enum(['false', '0']).transform(() => false as const),
  z.number().int().min(1).max(32),
  z.string().regex(/^\d{1,2}$/).transform(Number).pipe(z.number().int().min(1).max(32)),
  list.pipe(z.array(proxyAddress).min(1)),
])
const glob = z.string().regex(/^[a-z0-9_*?]+$/, 'a tool-id glob: lowercase letters, digits, _, * and ?')

/** One API key: the SHA-256 hex digest of the key (never the key itself) and whom it names. */
const ApiKeySchema = z.object({
  principal: z.string().min(1).max(128),
  sha256: z.string().regex(/^[0-9a-f]{64}$/, 'a 64-character lowercase hex SHA-256 digest'),
  scopes: z.array(z.string().min(1)).default(['tools:read', 'tools:call']),
}).strict()

/** Allow and deny lists of tool-id globs for one principal (`*` matches every principal). */
const RuleSchema = z.object({
  principal: z.string().min(1),
  allow: z.array(glob).default([]),
  deny: z.array(glob).default([]),
}).strict()

/** @internal exported for its tests, not for the package */
export const JwtSchema = z.object({
  issuer: z.string().min(1),
  audience: z.string().min(1),
  algorithms: list.pipe(z.array(z.enum(['RS256', 'RS384', 'RS512', 'PS256', 'PS384', 'PS512', 'ES256', 'ES384', 'ES512', 'EdDSA', 'HS256', 'HS384', 'HS512'])).min(1)),
  jwksUrl: z.url().optional(),
  /** A PEM public key (SPKI) or, for HS* algorithms, a shared secret of at least 32 bytes. */
  key: z.string().min(32).optional(),
  scopeClaim: z.string().min(1).default('scope'),
  clockToleranceSec: intFromEnv(0, 300).default(5),
  /**
   * Put before every token's `sub` to make its principal id, so JWT and API key principals never
   * merge by accident. Set it to '' only to map subjects onto API key principals on purpose.
   */
  principalPrefix: z.string().max(32).regex(/^[^*]*$/, 'no "*" (it names every principal in rules)').default('jwt:'),
}).strict().refine(jwt => (jwt.jwksUrl === undefined) !== (jwt.key === undefined), 'exactly one of jwksUrl or key')

/** Per-tool overload limits (config file only): calls in flight and queued over all sessions, and a rate. */
const ToolLimitSchema = z.object({
  maxInFlight: z.number().int().min(1).optional(),
  maxQueue: z.number().int().min(0).default(64),
  rateLimitMax: z.number().int().min(1).optional(),
}).strict()

/**
 * An operator's approval rule (config file only): calls of these tools by this principal (`*`:
 * everyone) wait for a person's yes; `approvers` (principals), when given, are the only ones who may give it.
 */
const ApprovalRuleSchema = z.object({
  tools: z.array(glob).min(1),
  principal: z.string().min(1).default('*'),
  approvers: z.array(z.string().min(1)).default([]),
}).strict()

/**
 * Every setting, validated once at start-up. Environment variables win over the optional JSON
 * file named by `CONFIG_FILE`; a bad value stops start-up with a message naming the setting.
 */
export const ConfigSchema = z.object({
  host: z.string().min(1).default('127.0.0.1'),
  port: intFromEnv(0, 65535).default(3000),
  /** Which peers' `X-Forwarded-*` headers are believed (see `trustProxy` above); Fastify's own option is set from it. */
  trustProxy: trustProxy.default(false),
  toolsDir: z.string().min(1).default('./tools'),
  /** A JSON file of upstream MCP servers (`mcpServers`, as Claude Desktop and Cursor write it) whose tools the gateway serves too. */
  upstreamsFile: z.string().min(1).optional(),
  /** `toolgate serve`: reload the tools folder whenever a file in it changes. */
  toolsWatch: boolFromEnv.default(false),
  logLevel: z.enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']).default('info'),
  bodyLimit: intFromEnv(1, 64 * 1024 * 1024).default(1024 * 1024),
  /** How deep and wide a JSON body (and a call's input) may be: refused with 400 when parsed, before any step walks it. */
  maxInputDepth: intFromEnv(1, MAX_DEPTH_BOUND).default(DEFAULT_INPUT_BOUNDS.depth),
  maxInputKeys: intFromEnv(1, 10_000_000).default(DEFAULT_INPUT_BOUNDS.keys),
  maxInputItems: intFromEnv(1, 100_000_000).default(DEFAULT_INPUT_BOUNDS.items),
  maxResponseBytes: intFromEnv(1, 1024 * 1024 * 1024).default(10 * 1024 * 1024),
  toolTimeoutMs: intFromEnv(1, 2 ** 31 - 1).default(CORE_DEFAULTS.defaultTimeoutMs),
  maxQueuePerSession: intFromEnv(0, 100_000).default(CORE_DEFAULTS.maxQueuePerDomain),
  queueTimeoutMs: intFromEnv(1, 2 ** 31 - 1).default(CORE_DEFAULTS.queueTimeoutMs),
  shutdownGraceMs: intFromEnv(0, 10 * 60_000).default(10_000),
  /** Longest time a client may take to send its headers, then its whole request (408 after). */
  headersTimeoutMs: intFromEnv(100, 10 * 60_000).default(10_000),
  requestTimeoutMs: intFromEnv(100, 60 * 60_000).default(30_000),
  /** Turn authentication off on a non-loopback address: you take responsibility. */
  authDisabled: boolFromEnv.default(false),
  apiKeys: z.array(ApiKeySchema).default([]),
  rules: z.array(RuleSchema).default([]),
  jwt: JwtSchema.optional(),
  /** Browser origins allowed to call (CORS); none: CORS off. `*` allows any origin, never with credentials. */
  corsOrigins: list.pipe(z.array(z.union([z.literal('*'), z.url().regex(/^https?:\/\/[^/]+$/, 'an origin: scheme://host[:port], no path')]))).default([]),
  corsCredentials: boolFromEnv.default(false),
  metrics: boolFromEnv.default(true),
  docs: boolFromEnv.default(true),
  /** Serve the whole document to callers without credentials (by default it needs the same credentials as GET /tools). */
  docsPublic: boolFromEnv.default(false),
  /** Idempotency records, rate-limit counters (and the demo ledger) live here when set. */
  redisUrl: z.string().regex(/^rediss?:\/\//, 'a redis:// or rediss:// URL').optional(),
  redisPrefix: z.string().regex(/^[\w:.-]{1,64}$/).default('toolgate:'),
  /** With `redisUrl`: a concurrency slot of a replica that stopped renewing it (it died) is freed after this long. */
  slotLeaseMs: intFromEnv(1_000, 10 * 60_000).default(5_000),
  /** With `redisUrl`: `redis` shares concurrency slots between replicas; `memory` keeps them per process (sticky sessions). */
  concurrencyStore: z.enum(['redis', 'memory']).default('redis'),
  idempotencyTtlMs: intFromEnv(1_000, 30 * 24 * 60 * 60 * 1000).default(24 * 60 * 60 * 1000),
  idempotencyMaxEntries: intFromEnv(100, 10_000_000).default(1_000_000),
  /** One principal's share of the records; unset, a quarter of `idempotencyMaxEntries`. */
  idempotencyMaxEntriesPerPrincipal: intFromEnv(1, 10_000_000).optional(),
  /** Bytes of the in-memory idempotency store over all principals, and one principal's share of them. */
  idempotencyMaxBytes: intFromEnv(64 * 1024, 2 ** 40).default(256 * 1024 * 1024),
  idempotencyMaxBytesPerPrincipal: intFromEnv(4 * 1024, 2 ** 40).default(64 * 1024 * 1024),
  /** Calls per principal per window over all tools; 0 turns rate limiting off. */
  rateLimitMax: intFromEnv(0, 10_000_000).default(0),
  rateLimitWindowMs: intFromEnv(100, 24 * 60 * 60 * 1000).default(60_000),
  /** Counts of declared limits (rates, quotas, budgets) kept in process at once, without Redis; past it a call that needs a new one answers 503. */
  limitMaxKeys: intFromEnv(1_000, 100_000_000).default(1_000_000),
  /** Sessions one principal may hold at once under one limit kept per session. */
  limitMaxSessions: intFromEnv(1, 100_000).default(64),
  toolLimits: z.record(z.string().regex(TOOL_ID), ToolLimitSchema).default({}),
  /** Failed authentications one source address may make per window before its unproven credentials get 429; 0: off. */
  authFailureLimit: intFromEnv(0, 1_000_000).default(20),
  authFailureWindowMs: intFromEnv(1_000, 24 * 60 * 60 * 1000).default(60_000),
  /** Refuse calls with 503 before the process falls over; 0 turns a check off. */
  maxEventLoopDelayMs: intFromEnv(0, 60_000).default(1_000),
  maxHeapUsedBytes: intFromEnv(0, 2 ** 40).default(0),
  maxRssBytes: intFromEnv(0, 2 ** 40).default(0),
  /** Human approvals: how long a request waits for a decision, and an approval for its use. */
  approvalTtlMs: intFromEnv(1_000, 7 * 24 * 60 * 60 * 1000).default(15 * 60 * 1000),
  approvalMaxPendingPerPrincipal: intFromEnv(1, 100_000).default(10),
  approvalMaxPending: intFromEnv(1, 1_000_000).default(1_000),
  /** The longest `Prefer: wait=N` honoured on a call that needs approval. */
  approvalMaxWaitMs: intFromEnv(0, 10 * 60_000).default(60_000),
  approvalAllowSelf: boolFromEnv.default(false),
  approvalRules: z.array(ApprovalRuleSchema).default([]),
  /** The gateway's address as people reach it (`https://gw.example.com`): the page link in webhooks. Unset: `http://HOST:PORT`. */
  approvalsPublicUrl: z.url().regex(/^https?:\/\/[^?#]+$/, 'an http(s) URL without query or fragment').transform(url => url.replace(/\/+$/, '')).optional(),
  /** With `jwt` from an OpenID Connect issuer: the approvals page signs people in there (authorization code + PKCE). */
  approvalsOidcClientId: z.string().min(1).optional(),
  /** A confidential client's secret (client_secret_basic); unset: a public client. */
  approvalsOidcClientSecret: z.string().min(1).optional(),
  approvalsOidcScope: z.string().regex(/^[\x21\x23-\x5b\x5d-\x7e]+( [\x21\x23-\x5b\x5d-\x7e]+)*$/, 'space-separated scope names').default('openid offline_access tools:read tools:approve'),
  /** How long a page sign-in lasts at most, refreshed or not. */
  approvalsSessionTtlMs: intFromEnv(60_000, 7 * 24 * 60 * 60 * 1000).default(8 * 60 * 60 * 1000),
  /** Where approval events are posted (Standard Webhooks), one URL or several. */
  approvalWebhookUrls: list.pipe(z.array(z.url().regex(/^https?:\/\//, 'an http(s) URL'))).default([]),
  /** `whsec_` and the base64 of at least 24 random bytes. */
  approvalWebhookSecret: z.string().regex(/^whsec_[A-Za-z0-9+/]{32,}={0,2}$/, '"whsec_" then the base64 of at least 24 random bytes').optional(),
  /** Put the approval's input in the event, not only its digest (inputs may hold personal data). */
  approvalWebhookInput: boolFromEnv.default(false),
  approvalWebhookAttempts: intFromEnv(1, 20).default(6),
  /** The first retry's delay; each next one doubles it (with jitter). */
  approvalWebhookBackoffMs: intFromEnv(1, 10 * 60_000).default(1_000),
  approvalWebhookTimeoutMs: intFromEnv(100, 60_000).default(5_000),
  /** Browser origins allowed to call `POST /mcp` besides the gateway's own host (`*`: any). */
  mcpAllowedOrigins: list.default([]),
  /**
   * MCP 2026-07-28: how long a retry carrying the `requestState` of a pending approval waits for
   * the decision before it answers `input_required` again. Below the SDKs' 60 s request timeout.
   */
  mcpApprovalWaitMs: intFromEnv(1_000, 55_000).default(20_000),
  /**
   * The secret sealing MCP `requestState` (at least 32 bytes). Unset: a random one per process,
   * shared through Redis when the gateway has one, so that any replica opens any replica's state.
   */
  mcpStateSecret: z.string().min(32, 'at least 32 characters of high-entropy secret').optional(),
  /** Serve the catalog's MCP endpoint (and `toolgate mcp`) in discovery mode: search, describe and call instead of every tool. */
  mcpDiscovery: z.enum(['off', 'on']).default('off'),
  /** Seals upstream tokens shared in Redis: 32-byte keys in base64, comma-separated, the sealing one first. */
  credentialsKey: z.string().min(1).optional(),
  /** The gateway's PKCS#8 PEM key for the JWTs it signs for upstreams (`auth.type: identity` with `jwt`). */
  upstreamSigningKey: z.string().min(1).optional(),
  /** The audit trail: a file path (appended to, its hash chain continued) or `stdout`; unset, none is kept. */
  auditLog: z.string().min(1).optional(),
  /** Write each audited call's input, not only its digest (inputs may hold personal data). */
  auditLogInputs: boolFromEnv.default(false),
  /** Audit lines held while the disk is busy; past this, lines are dropped, counted and logged. */
  auditBufferLines: intFromEnv(1, 10_000_000).default(10_000),
  /** Audit lines are written together, at most this long after the first of them (0: after each turn of the event loop). */
  auditFlushMs: intFromEnv(0, 1_000).default(10),
  /** fdatasync the audit file after every write, so that a power loss cannot take lines already written. */
  auditFsync: boolFromEnv.default(false),
}).strict()
  .refine(config => config.approvalWebhookUrls.length === 0 || config.approvalWebhookSecret !== undefined, { path: ['approvalWebhookSecret'], message: 'APPROVAL_WEBHOOK_URL needs APPROVAL_WEBHOOK_SECRET (whsec_...)' })
  .refine(config => config.approvalsOidcClientId === undefined || config.jwt !== undefined, { path: ['approvalsOidcClientId'], message: 'the page signs people in with the JWT issuer: set JWT_ISSUER, JWT_AUDIENCE and JWT_JWKS_URL too' })

export type Config = z.output<typeof ConfigSchema>
/** Settings as written in a config file or passed to the plugin: every field optional. */
export type ConfigInput = z.input<typeof ConfigSchema>

/** The environment variable of each setting. @internal exported for the docs generator and the tests, not for the package */
export const ENV_KEYS: Record<string, keyof Config> = {
  HOST: 'host', PORT: 'port', TRUST_PROXY: 'trustProxy', TOOLS_DIR: 'toolsDir', TOOLS_WATCH: 'toolsWatch', UPSTREAMS_FILE: 'upstreamsFile', LOG_LEVEL: 'logLevel', BODY_LIMIT: 'bodyLimit',
  MAX_INPUT_DEPTH: 'maxInputDepth', MAX_INPUT_KEYS: 'maxInputKeys', MAX_INPUT_ITEMS: 'maxInputItems', MAX_RESPONSE_BYTES: 'maxResponseBytes',
  TOOL_TIMEOUT_MS: 'toolTimeoutMs', MAX_QUEUE_PER_SESSION: 'maxQueuePerSession', QUEUE_TIMEOUT_MS: 'queueTimeoutMs',
  CORS_ORIGINS: 'corsOrigins', CORS_CREDENTIALS: 'corsCredentials',
  SHUTDOWN_GRACE_MS: 'shutdownGraceMs', HEADERS_TIMEOUT_MS: 'headersTimeoutMs', REQUEST_TIMEOUT_MS: 'requestTimeoutMs', AUTH_DISABLED: 'authDisabled', METRICS: 'metrics', DOCS: 'docs', DOCS_PUBLIC: 'docsPublic',
  REDIS_URL: 'redisUrl', REDIS_PREFIX: 'redisPrefix', IDEMPOTENCY_TTL_MS: 'idempotencyTtlMs',
  IDEMPOTENCY_MAX_ENTRIES: 'idempotencyMaxEntries', IDEMPOTENCY_MAX_ENTRIES_PER_PRINCIPAL: 'idempotencyMaxEntriesPerPrincipal', IDEMPOTENCY_MAX_BYTES: 'idempotencyMaxBytes',
  IDEMPOTENCY_MAX_BYTES_PER_PRINCIPAL: 'idempotencyMaxBytesPerPrincipal', RATE_LIMIT_MAX: 'rateLimitMax', RATE_LIMIT_WINDOW_MS: 'rateLimitWindowMs',
  LIMIT_MAX_KEYS: 'limitMaxKeys', LIMIT_MAX_SESSIONS: 'limitMaxSessions',
  AUTH_FAILURE_LIMIT: 'authFailureLimit', AUTH_FAILURE_WINDOW_MS: 'authFailureWindowMs',
  MAX_EVENT_LOOP_DELAY_MS: 'maxEventLoopDelayMs', MAX_HEAP_USED_BYTES: 'maxHeapUsedBytes', MAX_RSS_BYTES: 'maxRssBytes',
  APPROVAL_TTL_MS: 'approvalTtlMs', APPROVAL_MAX_PENDING_PER_PRINCIPAL: 'approvalMaxPendingPerPrincipal',
  APPROVAL_MAX_PENDING: 'approvalMaxPending', APPROVAL_MAX_WAIT_MS: 'approvalMaxWaitMs', APPROVAL_ALLOW_SELF: 'approvalAllowSelf',
  APPROVALS_PUBLIC_URL: 'approvalsPublicUrl', APPROVALS_OIDC_CLIENT_ID: 'approvalsOidcClientId', APPROVALS_OIDC_CLIENT_SECRET: 'approvalsOidcClientSecret',
  APPROVALS_OIDC_SCOPE: 'approvalsOidcScope', APPROVALS_SESSION_TTL_MS: 'approvalsSessionTtlMs',
  APPROVAL_WEBHOOK_URL: 'approvalWebhookUrls', APPROVAL_WEBHOOK_SECRET: 'approvalWebhookSecret', APPROVAL_WEBHOOK_INPUT: 'approvalWebhookInput',
  APPROVAL_WEBHOOK_ATTEMPTS: 'approvalWebhookAttempts', APPROVAL_WEBHOOK_BACKOFF_MS: 'approvalWebhookBackoffMs', APPROVAL_WEBHOOK_TIMEOUT_MS: 'approvalWebhookTimeoutMs',
  SLOT_LEASE_MS: 'slotLeaseMs', CONCURRENCY_STORE: 'concurrencyStore',
  MCP_ALLOWED_ORIGINS: 'mcpAllowedOrigins', MCP_APPROVAL_WAIT_MS: 'mcpApprovalWaitMs', MCP_STATE_SECRET: 'mcpStateSecret', MCP_DISCOVERY: 'mcpDiscovery',
  CREDENTIALS_KEY: 'credentialsKey', UPSTREAM_SIGNING_KEY: 'upstreamSigningKey',
  AUDIT_LOG: 'auditLog', AUDIT_LOG_INPUTS: 'auditLogInputs', AUDIT_BUFFER_LINES: 'auditBufferLines',
  AUDIT_FLUSH_MS: 'auditFlushMs', AUDIT_FSYNC: 'auditFsync',
}

export class ConfigError extends Error {
  constructor (message: string) {
    super(message)
    this.name = 'ConfigError'
  }
}

/**
 * Read configuration from `env` (and `CONFIG_FILE`, when set). `API_KEYS` is
 * `principal:sha256[:scope scope];...`; JWT settings are `JWT_ISSUER`, `JWT_AUDIENCE`,
 * `JWT_ALGORITHMS`, `JWT_JWKS_URL` or `JWT_KEY`, `JWT_SCOPE_CLAIM`.
 */
export function loadConfig (env: NodeJS.ProcessEnv = process.env, overrides: Partial<z.input<typeof ConfigSchema>> = {}): Config {
  const raw: Record<string, unknown> = { ...readConfigFile(env.CONFIG_FILE) }
  for (const [name, key] of Object.entries(ENV_KEYS)) if (env[name] !== undefined && env[name] !== '') raw[key] = env[name]
  if (env.API_KEYS !== undefined && env.API_KEYS !== '') raw.apiKeys = parseApiKeys(env.API_KEYS)
  const jwt = jwtFromEnv(env)
  if (jwt !== undefined) raw.jwt = jwt
  const config = parseConfig({ ...raw, ...overrides })
  checkExposure(config)
  return config
}

/** Validate settings from anywhere (environment, file, code); the first problem names its setting. */
export function parseConfig (raw: unknown): Config {
  const parsed = ConfigSchema.safeParse(raw)
  if (!parsed.success) {
    const issue = parsed.error.issues[0]!
    throw new ConfigError(`invalid setting "${issue.path.join('.') || '(root)'}": ${issue.message}`)
  }
  checkPrincipalNames(parsed.data)
  if (parsed.data.corsCredentials && parsed.data.corsOrigins.includes('*')) {
    throw new ConfigError('invalid setting "corsCredentials": credentials need explicit origins in CORS_ORIGINS, not "*"')
  }
  return parsed.data
}

function readConfigFile (path: string | undefined): Record<string, unknown> {
  if (path === undefined || path === '') return {}
  try {
    const value: unknown = JSON.parse(readFileSync(path, 'utf8'))
    if (typeof value !== 'object' || value === null || Array.isArray(value)) throw new Error('the file must hold a JSON object')
    return value as Record<string, unknown>
  } catch (error) {
    throw new ConfigError(`invalid setting "CONFIG_FILE" (${path}): ${(error as Error).message}`)
  }
}

/** `principal:sha256[:scopes]`; scopes are separated by spaces or commas and may contain `:`. */
function parseApiKeys (value: string): unknown[] {
  return value.split(';').map(s => s.trim()).filter(s => s !== '').map(entry => {
    const [principal, sha256, ...rest] = entry.split(':')
    const scopes = rest.join(':')
    return { principal, sha256, ...(rest.length === 0 ? {} : { scopes: scopes.split(/[ ,]+/).filter(s => s !== '') }) }
  })
}

function jwtFromEnv (env: NodeJS.ProcessEnv): Record<string, unknown> | undefined {
  if (env.JWT_ISSUER === undefined && env.JWT_AUDIENCE === undefined) return undefined
  const jwt: Record<string, unknown> = { issuer: env.JWT_ISSUER, audience: env.JWT_AUDIENCE, algorithms: env.JWT_ALGORITHMS ?? 'RS256,ES256' }
  if (env.JWT_JWKS_URL !== undefined) jwt.jwksUrl = env.JWT_JWKS_URL
  if (env.JWT_KEY !== undefined) jwt.key = env.JWT_KEY
  if (env.JWT_SCOPE_CLAIM !== undefined) jwt.scopeClaim = env.JWT_SCOPE_CLAIM
  if (env.JWT_PRINCIPAL_PREFIX !== undefined) jwt.principalPrefix = env.JWT_PRINCIPAL_PREFIX
  return jwt
}

function isAddressOrRange (value: string): boolean {
  const slash = value.indexOf('/')
  if (slash === -1) return isIP(value) !== 0
  const family = isIP(value.slice(0, slash))
  const bits = value.slice(slash + 1)
  return family !== 0 && /^\d{1,3}$/.test(bits) && Number(bits) <= (family === 4 ? 32 : 128)
}

/**
 * With a JWT prefix, an API key principal named like a prefixed subject (`jwt:alice`) would be
 * that token's principal after all: refuse the name so the two authenticators stay apart.
 */
function checkPrincipalNames (config: Pick<Config, 'apiKeys' | 'jwt'>): void {
  const prefix = config.jwt?.principalPrefix ?? ''
  if (prefix === '') return
  const clash = config.apiKeys.find(key => key.principal.startsWith(prefix))
  if (clash !== undefined) throw new ConfigError(`invalid setting "apiKeys": principal "${clash.principal}" starts with the JWT principal prefix "${prefix}"; rename it or change jwt.principalPrefix`)
}

/** Secure default: anonymous callers only on loopback, unless auth is turned off explicitly. */
function checkExposure (config: Config): void {
  const credentials = config.apiKeys.length > 0 || config.jwt !== undefined
  if (!credentials && !config.authDisabled && !isLoopback(config.host)) {
    throw new ConfigError(`invalid setting "HOST": ${config.host} is not a loopback address and no API_KEYS or JWT_* are configured; configure credentials or set AUTH_DISABLED=true`)
  }
}

/** The input bounds the settings give, as the core and the body parsers take them. */
export function inputBoundsOf (config: Pick<Config, 'maxInputDepth' | 'maxInputKeys' | 'maxInputItems'>): InputBounds {
  return { depth: config.maxInputDepth, keys: config.maxInputKeys, items: config.maxInputItems }
}

/** The setting of each input bound, for messages that name it. */
export function boundSetting (bound: keyof InputBounds): string {
  return bound === 'depth' ? 'MAX_INPUT_DEPTH' : bound === 'keys' ? 'MAX_INPUT_KEYS' : 'MAX_INPUT_ITEMS'
}
