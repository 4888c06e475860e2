/**
 * The targets: which server file, which request, and how to tell its answer is right (a 200
 * from the MCP server may still carry a JSON-RPC error or `isError`).
 */
import { BENCH_API_KEY, ECHO_PATH, ECHO_TEXT } from '../targets/echo.js'

export interface Request {
  readonly path: string
  readonly headers: Readonly<Record<string, string>>
  readonly body: string
}

export interface Target {
  readonly id: string
  readonly label: string
  readonly file: string
  readonly env?: Readonly<Record<string, string>>
  readonly request: Request
  readonly isRight: (body: unknown) => boolean
}

export const BASELINE_ID = 'fastify-zod'

const JSON_HEADERS = { 'content-type': 'application/json' }
const restEcho: Request = { path: ECHO_PATH, headers: JSON_HEADERS, body: JSON.stringify({ text: ECHO_TEXT }) }
const isEcho = (body: unknown): boolean => {
  const value = body as { text?: unknown, length?: unknown } | null
  return value?.text === ECHO_TEXT && value.length === ECHO_TEXT.length
}

export function toolgateTarget (tools: number): Target {
  return {
    id: tools === 1 ? 'toolgate' : `toolgate-${tools}-tools`,
    label: `toolgate, ${tools} tool${tools === 1 ? '' : 's'}`,
    file: 'bench/targets/toolgate.ts',
    env: { BENCH_TOOLS: String(tools) },
    request: { ...restEcho, headers: { ...JSON_HEADERS, 'x-api-key': BENCH_API_KEY } },
    isRight: isEcho,
  }
}

const mcpCall = { jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'echo', arguments: { text: ECHO_TEXT } } }
const isMcpEcho = (body: unknown): boolean => {
  const result = (body as { result?: { isError?: boolean, structuredContent?: unknown } } | null)?.result
  return result?.isError !== true && isEcho(result?.structuredContent)
}
const MCP_HEADERS = { ...JSON_HEADERS, accept: 'application/json, text/event-stream', 'mcp-protocol-version': '2025-11-25' }
const mcpEcho: Request = { path: '/mcp', headers: MCP_HEADERS, body: JSON.stringify(mcpCall) }
/** The request with the API key the toolgate targets configure. */
function keyed (request: Request): Request {
  return { ...request, headers: { ...request.headers, 'x-api-key': BENCH_API_KEY } }
}

export const TARGETS: readonly Target[] = [
  { id: 'node-http', label: 'node:http + hand check', file: 'bench/targets/node-http.ts', request: restEcho, isRight: isEcho },
  { id: BASELINE_ID, label: 'Fastify + type-provider-zod', file: 'bench/targets/fastify-zod.ts', request: restEcho, isRight: isEcho },
  toolgateTarget(1),
  {
    id: 'toolgate-mcp',
    label: 'toolgate, MCP tools/call',
    file: 'bench/targets/toolgate.ts',
    env: { BENCH_TOOLS: '1' },
    request: keyed(mcpEcho),
    isRight: isMcpEcho,
  },
  { id: 'hono-zod-openapi', label: '@hono/zod-openapi', file: 'bench/targets/hono-zod-openapi.ts', request: restEcho, isRight: isEcho },
  {
    id: 'mcp-sdk',
    label: 'MCP SDK, stateless HTTP',
    file: 'bench/targets/mcp-sdk.ts',
    request: { path: '/mcp', headers: { ...JSON_HEADERS, accept: 'application/json, text/event-stream' }, body: JSON.stringify(mcpCall) },
    isRight: isMcpEcho,
  },
]

/**
 * The gateway with one production feature on, and the same gateway with it off (each variant's
 * reference, see features.ts): `echo` over REST and MCP untraced, traced at two samplers, and a
 * writing `echo` with and without the audit log; the reference twice, for the bench's own noise;
 * and one Fastify app answering `echo` by hand over REST and over MCP, and traced by hand, for
 * what MCP and tracing cost whoever serves them.
 */
export const FEATURE_TARGETS: readonly Target[] = [
  { id: 'untraced', label: 'echo, REST, untraced', file: 'bench/targets/toolgate-untraced.ts', request: keyed(restEcho), isRight: isEcho },
  // The reference again, in a process of its own: how far apart two runs of the same code read.
  { id: 'untraced-again', label: 'echo, REST, untraced (the same again)', file: 'bench/targets/toolgate-untraced.ts', request: keyed(restEcho), isRight: isEcho },
  { id: 'untraced-mcp', label: 'echo, MCP tools/call, untraced', file: 'bench/targets/toolgate-untraced.ts', request: keyed(mcpEcho), isRight: isMcpEcho },
  { id: 'traced-always-on', label: 'echo, traced (always_on)', file: 'bench/targets/toolgate-traced.ts', request: keyed(restEcho), isRight: isEcho },
  { id: 'traced-ratio-0.1', label: 'echo, traced (parentbased_traceidratio 0.1)', file: 'bench/targets/toolgate-traced-ratio.ts', request: keyed(restEcho), isRight: isEcho },
  { id: 'traced-ratio-0.1-active', label: 'echo, traced (parentbased_traceidratio 0.1, TRACE_ACTIVE_SPAN)', file: 'bench/targets/toolgate-traced-ratio-active.ts', request: keyed(restEcho), isRight: isEcho },
  { id: 'write', label: 'writing echo, unaudited', file: 'bench/targets/toolgate-write.ts', request: keyed(restEcho), isRight: isEcho },
  { id: 'write-audited', label: 'writing echo, audited', file: 'bench/targets/toolgate-write-audited.ts', request: keyed(restEcho), isRight: isEcho },
  { id: 'write-audited-fsync', label: 'writing echo, audited, AUDIT_FSYNC', file: 'bench/targets/toolgate-write-audited-fsync.ts', request: keyed(restEcho), isRight: isEcho },
  // What MCP costs whoever serves it: one Fastify app answering both by hand, the same checks each way.
  { id: 'by-hand', label: 'Fastify, echo by hand, REST', file: 'bench/targets/fastify-by-hand.ts', request: restEcho, isRight: isEcho },
  { id: 'by-hand-mcp', label: 'Fastify, echo by hand, MCP tools/call', file: 'bench/targets/fastify-by-hand.ts', request: mcpEcho, isRight: isMcpEcho },
  { id: 'by-hand-traced', label: 'Fastify, echo by hand, REST, spans by hand (always_on)', file: 'bench/targets/fastify-by-hand.ts', env: { BENCH_TRACE: 'always_on' }, request: restEcho, isRight: isEcho },
  { id: 'by-hand-traced-0.1', label: 'Fastify, echo by hand, REST, spans by hand (0.1)', file: 'bench/targets/fastify-by-hand.ts', env: { BENCH_TRACE: '0.1' }, request: restEcho, isRight: isEcho },
]

/**
 * The cost of sharing concurrency slots through Redis (issue 15), for `bench/compare.ts`: the
 * read-only `echo` and an exclusive twin, each in process and with Redis (BENCH_REDIS_URL, else
 * the local default). Not in TARGETS: `npm run bench` needs no Redis.
 */
export function redisTargets (redisUrl = process.env.BENCH_REDIS_URL ?? 'redis://127.0.0.1:6379'): Target[] {
  const exclusive: Request = { ...restEcho, path: '/tools/echo_exclusive' }
  const base = { file: 'bench/targets/toolgate-redis.ts', isRight: isEcho }
  return [
    // An empty BENCH_REDIS_URL: in process even when the caller's environment sets it.
    { ...base, id: 'toolgate-echo', label: 'toolgate, echo, in process', env: { BENCH_REDIS_URL: '' }, request: keyed(restEcho) },
    { ...base, id: 'toolgate-redis', label: 'toolgate, echo, slots in Redis', env: { BENCH_REDIS_URL: redisUrl }, request: keyed(restEcho) },
    { ...base, id: 'toolgate-exclusive', label: 'toolgate, exclusive echo, in process', env: { BENCH_REDIS_URL: '' }, request: keyed(exclusive) },
    { ...base, id: 'toolgate-redis-exclusive', label: 'toolgate, exclusive echo, slots in Redis', env: { BENCH_REDIS_URL: redisUrl }, request: keyed(exclusive) },
  ]
}
