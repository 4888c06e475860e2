import { ConfigSchema, ENV_KEYS, type Config } from '../../src/services/config.js'

/**
 * The settings table of docs/configuration.md, generated: names from `ENV_KEYS`, defaults from
 * `ConfigSchema` itself (so a changed default cannot leave the table behind), meanings from
 * `SETTING_DOCS`. A setting without a line here fails the docs check, so a new one cannot go
 * undocumented. Used by `scripts/readme.ts` only: it is not part of the package.
 */
const SETTING_DOCS: Readonly<Record<string, string>> = {
  HOST: 'listen address. A non-loopback address needs `API_KEYS` or `JWT_*`, or `AUTH_DISABLED=true`',
  PORT: 'listen port',
  TRUST_PROXY: 'the gateway sits behind a proxy: a hop count (`1`: the proxy in front adds the last `X-Forwarded-For` entry) or the proxies\' addresses and CIDR ranges (`10.0.0.0/8,fd00::/8`: only a peer among them is believed). Then the client\'s address (failed-authentication throttle, logs, audit), scheme and host (the advertised protected-resource URL, links) come from `X-Forwarded-For`, `-Proto`, `-Host`. Off, those headers are ignored. See [Behind a proxy](operations.md#behind-a-proxy)',
  TOOLS_DIR: 'folder of tool modules (`toolgate serve DIR` overrides it)',
  TOOLS_WATCH: '`toolgate serve`: reload the tools folder when a file in it is added, changed or removed (`--watch`); `SIGHUP` reloads it in any case. See [A live catalog](operations.md#a-live-catalog)',
  UPSTREAMS_FILE: 'a JSON file of upstream MCP servers (the `mcpServers` format Claude Desktop, Cursor and mcpo read) and OpenAPI services whose tools are served beside the local ones (`toolgate serve --upstreams FILE`). See [Upstreams](upstreams.md)',
  LOG_LEVEL: 'pino level; `debug` also logs call inputs',
  BODY_LIMIT: 'request body limit in bytes (413 above); also the longest message `toolgate mcp` reads from stdin',
  MAX_INPUT_DEPTH: 'how deep a JSON body, and a call\'s input on any face, may nest objects and arrays (a top-level `{}` is 1; at most 1000). Deeper is refused with 400 `TOOLGATE_INPUT_TOO_COMPLEX` when the body is parsed, before any step walks it. MCP messages get 2 levels more for their envelope',
  MAX_INPUT_KEYS: 'members one object of a body or input may have (400 `TOOLGATE_INPUT_TOO_COMPLEX` above)',
  MAX_INPUT_ITEMS: 'items one array of a body or input may have (400 `TOOLGATE_INPUT_TOO_COMPLEX` above)',
  MAX_RESPONSE_BYTES: 'largest tool response; a larger output is the tool\'s invalid output (502)',
  TOOL_TIMEOUT_MS: 'timeout of a tool that declares none',
  MAX_QUEUE_PER_SESSION: 'calls that may wait in one concurrency domain (429 above)',
  QUEUE_TIMEOUT_MS: 'longest wait for a slot (503 after)',
  SHUTDOWN_GRACE_MS: 'on SIGTERM/SIGINT, how long calls in flight may finish before they are aborted',
  HEADERS_TIMEOUT_MS: 'a client must send its request headers within this time (408 problem+json, connection closed)',
  REQUEST_TIMEOUT_MS: 'a client must send its whole request, body included, within this time (408); other clients are served meanwhile',
  AUTH_FAILURE_LIMIT: 'failed authentications a source address may make per window; past it, that address\'s *failures* answer 429 with `Retry-After` instead of 401. The credential is always checked first, so a valid one gets in from any address, however much it failed (no lock-out of a real principal behind a shared NAT or proxy; see `TRUST_PROXY`). 0: off',
  AUTH_FAILURE_WINDOW_MS: 'the window of `AUTH_FAILURE_LIMIT`',
  CORS_ORIGINS: 'browser origins allowed to call, comma-separated (`https://app.example.com`), or `*`; none: CORS off. Preflights are answered for tool calls, listings and the document',
  CORS_CREDENTIALS: 'let browsers send credentials cross-origin (needs explicit origins, not `*`)',
  AUDIT_LOG: 'the audit trail: a file path (appended to, its hash chain continued) or `stdout`; see [Audit trail](observability.md#audit-trail)',
  AUDIT_LOG_INPUTS: 'also write each audited call\'s input, not only its digest (inputs may hold personal data)',
  AUDIT_BUFFER_LINES: 'audit lines held while the disk is busy, a quarter at most per principal, the last eighth kept for principals with few waiting; beyond, lines are dropped, counted and logged. See [Shared bounds](#shared-bounds)',
  AUDIT_FLUSH_MS: 'audit lines are written together, at most this long after the first of them (0: at the end of each turn of the event loop); a process that dies loses at most this window. See [what reaches the disk when](observability.md#what-reaches-the-disk-when)',
  AUDIT_FSYNC: 'fdatasync the audit file after every write: a power loss then loses at most the lines of the write in flight, not the kernel\'s unwritten pages',
  MCP_ALLOWED_ORIGINS: 'browser origins (comma-separated, `*` for any) that may call `POST /mcp` besides the gateway\'s own host; requests without `Origin` are not browsers and pass',
  MCP_APPROVAL_WAIT_MS: 'MCP 2026-07-28: how long a `tools/call` retried with the `requestState` of a pending approval waits for the decision before answering `input_required` again (the SDK clients retry by themselves)',
  MCP_DISCOVERY: '`on`: the catalog\'s MCP endpoint (`POST /mcp` and `toolgate mcp`) lists three tools, `search_tools`, `describe_tool` and `call_tool`, instead of every tool; a call through `call_tool` is the same call as a direct one (see [discovery.md](discovery.md)). `off` (default): every tool is listed',
  MCP_STATE_SECRET: 'seals MCP `requestState` (AES-256-GCM; at least 32 characters). Unset: random per process, or shared through Redis with `REDIS_URL`; set it when replicas share no Redis',
  CREDENTIALS_KEY: 'seals the upstream tokens replicas share in Redis (JWE, A256GCM): 32-byte keys in base64, comma-separated, the sealing one first (the others still open what they sealed: rotation). Required with `REDIS_URL` when an upstream declares an OAuth `auth`',
  UPSTREAM_SIGNING_KEY: 'the PKCS#8 PEM private key (EC P-256/P-384, RSA or Ed25519) of the JWTs the gateway signs for upstreams that take its word for who calls (`auth.type: identity` with `jwt`); its public half is served at `/.well-known/jwks.json`. Unset: a key per process, which replicas do not share',
  DOCS_PUBLIC: 'serve `/openapi.json` (whole) to callers without credentials; otherwise it needs the same credentials as `GET /tools` and lists only the tools the caller may call',
  AUTH_DISABLED: 'serve anonymous callers on any address (you take responsibility)',
  METRICS: 'serve `/metrics` and count calls',
  DOCS: 'serve the Swagger UI at `/docs`',
  REDIS_URL: '`redis://...`: idempotency records, rate-limit counters and the demo ledger live in Redis, shared by replicas',
  REDIS_PREFIX: 'prefix of every Redis key this gateway writes',
  SLOT_LEASE_MS: 'with `REDIS_URL`: a concurrency slot held by a replica that stopped renewing it (it died, or lost Redis) is freed after this long',
  CONCURRENCY_STORE: 'with `REDIS_URL`: `redis` shares concurrency domains and `toolLimits` between replicas; `memory` keeps them per process (only behind sticky sessions)',
  IDEMPOTENCY_TTL_MS: 'how long an idempotency record is kept (24 h)',
  IDEMPOTENCY_MAX_ENTRIES: 'bound of the idempotency store in records (in memory, or in Redis over every replica)',
  IDEMPOTENCY_MAX_ENTRIES_PER_PRINCIPAL: 'one principal\'s share of those records (none: a quarter of `IDEMPOTENCY_MAX_ENTRIES`). Past it, its new keys answer 429 `TOOLGATE_IDEMPOTENCY_QUOTA`; the last eighth of the store is kept for principals holding fewer than 16 records, so one that holds nothing always stores its first ones. See [Shared bounds](#shared-bounds)',
  IDEMPOTENCY_MAX_BYTES: 'bound of the in-memory idempotency store in bytes (keys and stored answers)',
  IDEMPOTENCY_MAX_BYTES_PER_PRINCIPAL: 'one principal\'s share of it (about 100 000 small answers a day at the default TTL). No record is ever dropped before `IDEMPOTENCY_TTL_MS`: when a principal\'s share is full its new keys answer 429 `TOOLGATE_IDEMPOTENCY_QUOTA` (the whole store full: 503), so nobody\'s traffic can make another\'s retry run twice',
  RATE_LIMIT_MAX: 'calls per principal per window, over all tools (0: off)',
  RATE_LIMIT_WINDOW_MS: 'the rate-limit window',
  LIMIT_MAX_KEYS: 'counts of declared limits (rates, quotas, budgets; [limits.md](limits.md)) kept in process at once, without `REDIS_URL`; past it a call that needs a new count answers 503',
  LIMIT_MAX_SESSIONS: 'sessions one principal may hold at once under one limit kept `per: session`; past it 429',
  MAX_EVENT_LOOP_DELAY_MS: 'refuse tool calls with 503 above this event-loop delay (0: off)',
  MAX_HEAP_USED_BYTES: 'refuse tool calls with 503 above this heap use (0: off)',
  MAX_RSS_BYTES: 'refuse tool calls with 503 above this resident memory (0: off)',
  APPROVAL_TTL_MS: 'how long a pending approval waits for a decision, and an approval for its use (15 min)',
  APPROVAL_MAX_PENDING_PER_PRINCIPAL: 'pending approvals one principal may hold (429 above)',
  APPROVAL_MAX_PENDING: 'pending approvals over all principals (429 above); the last eighth is kept for principals with none pending. See [Shared bounds](#shared-bounds)',
  APPROVAL_MAX_WAIT_MS: 'the longest `Prefer: wait` honoured',
  APPROVAL_ALLOW_SELF: 'let an approver decide their own request (off: another person must)',
  APPROVALS_PUBLIC_URL: 'the gateway as people reach it (`https://gw.example.com`), for the page link in webhook events; unset: `http://HOST:PORT`',
  APPROVALS_OIDC_CLIENT_ID: 'with `JWT_*` pointing at an OpenID Connect issuer: the approvals page signs people in there (authorization code + PKCE, redirect URI `/approvals/ui/callback` on the gateway\'s own origin); see [The approvals page](approvals.md#the-approvals-page)',
  APPROVALS_OIDC_CLIENT_SECRET: 'the secret of a confidential client (sent as HTTP Basic); unset: a public client',
  APPROVALS_OIDC_SCOPE: 'the scopes the page asks the issuer for; its access token must carry `tools:approve` for its holder to decide',
  APPROVALS_SESSION_TTL_MS: 'the longest a page sign-in lasts, however often its tokens are refreshed',
  APPROVAL_WEBHOOK_URL: 'where `approval.requested`, `approval.decided` and `approval.expired` events are posted (one URL or comma-separated), signed per Standard Webhooks',
  APPROVAL_WEBHOOK_SECRET: 'the `whsec_...` signing secret of those events (required with `APPROVAL_WEBHOOK_URL`)',
  APPROVAL_WEBHOOK_INPUT: 'put the approval\'s input in each event, not only its digest (inputs may hold personal data)',
  APPROVAL_WEBHOOK_ATTEMPTS: 'deliveries of one event to one URL before it is given up (counted in `toolgate_approval_webhooks_total{outcome="failed"}`)',
  APPROVAL_WEBHOOK_BACKOFF_MS: 'the delay before the first retry; each next one doubles, with jitter',
  APPROVAL_WEBHOOK_TIMEOUT_MS: 'how long one delivery may take before it counts as failed',
}

/** Settings read outside `ENV_KEYS` (composite or tool-specific), with their default as text. */
const OTHER_SETTINGS: ReadonlyArray<readonly [name: string, defaultText: string, doc: string]> = [
  ['API_KEYS', 'none', '`principal:sha256hex[:scope,scope];...` (digests only; `toolgate hash-key --generate` makes a key and its digest)'],
  ['JWT_ISSUER`, `JWT_AUDIENCE', 'none', 'turn on JWT bearer tokens (both required)'],
  ['JWT_ALGORITHMS', '`RS256,ES256`', 'the pinned algorithms (`none` is never accepted)'],
  ['JWT_JWKS_URL` or `JWT_KEY', 'none', 'where keys come from: a JWKS URL, or a PEM public key / HS shared secret'],
  ['JWT_SCOPE_CLAIM', '`scope`', 'claim holding the scopes (space-separated string or array)'],
  ['JWT_PRINCIPAL_PREFIX', '`jwt:`', 'put before a token\'s `sub` to make its principal id (rules name `jwt:alice`), so a token never shares notes, idempotency records or sessions with the API key principal `alice`; `\'\'` maps them together on purpose. Tokens issued (`iat`) in the future beyond `clockToleranceSec` (5 s) are refused'],
  ['CONFIG_FILE', 'none', 'JSON file with any of the settings (camelCase keys), plus `rules`, `approvalRules` and `toolLimits`'],
  ['LEDGER_APPROVAL_ABOVE_CENTS', '`50000`', 'demo ledger: transfers above this wait for approval (`off`: never)'],
  ['LEDGER_DAILY_BUDGET_CENTS', '`500000`', 'demo ledger: what one principal may transfer a UTC day before each further transfer waits for approval (`off`: no budget; [limits.md](limits.md))'],
  ['OTEL_EXPORTER_OTLP_ENDPOINT` and the other standard `OTEL_*', 'none (off)', 'OpenTelemetry tracing; see [Traces](observability.md#traces-opentelemetry)'],
  ['TRACE_ACTIVE_SPAN', '`false`', 'traced: run each tool with its call\'s span as OpenTelemetry\'s active span (a context manager: it costs every call, see [Traces](observability.md#traces-opentelemetry))'],
  ['FETCH_ALLOWED_HOSTS', 'none', 'hosts `url_fetch` may reach (comma-separated); none means it refuses every URL'],
]

export function settingsTable (): string {
  const defaults: Partial<Config> = ConfigSchema.parse({})
  const rows = Object.entries(ENV_KEYS).map(([name, key]) => {
    const doc = SETTING_DOCS[name]
    if (doc === undefined) throw new Error(`setting ${name} has no line in SETTING_DOCS (scripts/lib/settings-table.ts)`)
    const value = defaults[key]
    const shown = value === undefined ? 'none' : `\`${typeof value === 'object' ? JSON.stringify(value) : String(value)}\``
    return `| \`${name}\` | ${shown} | ${doc} |`
  })
  const others = OTHER_SETTINGS.map(([name, shown, doc]) => `| \`${name}\` | ${shown} | ${doc} |`)
  return ['| variable | default | meaning |', '|---|---|---|', ...rows, ...others].join('\n')
}
