/**
 * toolgate as the bench target builds it, with one of this branch's features switched on, to
 * measure what each costs against the same gateway without it (`npx tsx bench/compare.ts`):
 *
 *   npx tsx bench/compare.ts toolgate ./bench/targets/toolgate-traced.ts
 *   npx tsx bench/compare.ts ./bench/targets/toolgate-write.ts ./bench/targets/toolgate-write-audited.ts
 */
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import type { AddressInfo } from 'node:net'
import { defineTool, type AnyTool } from '../../src/index.js'
import { buildApp } from '../../plugins/app.js'
import { hashApiKey } from '../../src/services/auth/api-keys.js'
import { loadConfig } from '../../src/services/config.js'
import { tracingFromEnv } from '../../src/services/tracing/setup.js'
import { startOtlpSink } from '../lib/otlp-sink.js'
import { announce } from './announce.js'
import { BENCH_API_KEY, echo, EchoInput, EchoOutput } from './echo.js'
import { echoTool } from './toolgate-tools.js'

/**
 * `echo` declared as changing state (so the audit trail covers it), with the same work. Its
 * selfConcurrency lets a session's calls overlap as the read-only echo's do, or the comparison
 * would measure the scheduler instead of the audit log.
 */
const writingEcho: AnyTool = defineTool({
  id: 'echo', kind: 'write', description: 'Echo the text back with its length (declared as a write).',
  inputSchema: EchoInput, outputSchema: EchoOutput, isReadOnly: false, isConcurrencySafe: false, selfConcurrency: 1_000,
  authorize () {}, execute: echo,
})

export interface Variant {
  /** Trace every call (always_on), exporting OTLP/HTTP to a receiver in another process. */
  readonly traced?: boolean
  /** Audit to a file in a temporary folder. */
  readonly audited?: boolean
  /** With `audited`: fdatasync after every write (`AUDIT_FSYNC=true`). */
  readonly fsync?: boolean
  /** With `traced`: the sampler (`OTEL_TRACES_SAMPLER`, `_ARG`) instead of always_on. */
  readonly sampler?: { readonly name: string, readonly arg?: string }
  /** With `traced`: TRACE_ACTIVE_SPAN=true (the tool runs with its span active: a context manager). */
  readonly activeSpan?: boolean
  /** Serve the writing echo instead of the read-only one. */
  readonly writing?: boolean
}

export async function serveVariant (variant: Variant): Promise<void> {
  const auditDir = variant.audited === true ? mkdtempSync(join(tmpdir(), 'toolgate-bench-')) : undefined
  const config = loadConfig({}, {
    logLevel: 'warn',
    apiKeys: [{ principal: 'bench', sha256: hashApiKey(BENCH_API_KEY), scopes: ['tools:read', 'tools:call'] }],
    ...(auditDir === undefined ? {} : { auditLog: join(auditDir, 'audit.log'), auditFsync: variant.fsync === true }),
  })
  const sampler = variant.sampler ?? { name: 'always_on' }
  const tracing = variant.traced === true
    ? await tracingFromEnv({
      OTEL_EXPORTER_OTLP_ENDPOINT: await startOtlpSink(), OTEL_SERVICE_NAME: 'toolgate-bench',
      OTEL_TRACES_SAMPLER: sampler.name, ...(sampler.arg === undefined ? {} : { OTEL_TRACES_SAMPLER_ARG: sampler.arg }),
      ...(variant.activeSpan === true ? { TRACE_ACTIVE_SPAN: 'true' } : {}),
    })
    : undefined
  const app = await buildApp({ config, tools: [variant.writing === true ? writingEcho : echoTool], logger: { level: config.logLevel }, tracing })
  // The log stays open (and written, synced with `fsync`) after its name is gone: the bench stops
  // targets with SIGKILL, and each audited run would otherwise leave tens of MiB in the temp folder.
  if (auditDir !== undefined) rmSync(auditDir, { recursive: true, force: true })
  await app.listen({ host: '127.0.0.1', port: 0 })
  announce((app.server.address() as AddressInfo).port)
}
