/**
 * Run as its own process: toolgate's start-up with N tools (buildApp + ready), its first
 * OpenAPI generation, and `/metrics` scrapes once every tool has been called. Prints JSON.
 */
import { performance } from 'node:perf_hooks'
import { setTimeout as sleep } from 'node:timers/promises'
import type { FastifyInstance } from 'fastify'
import { BENCH_API_KEY } from '../targets/echo.js'
import { buildBenchGateway } from '../targets/toolgate-app.js'
import { median } from './stats.js'

export interface StartupResult {
  readonly tools: number
  /** buildApp + ready. */
  readonly startupMs: number
  /** From the process's start to ready, module loading and tool definitions included. */
  readonly processToReadyMs: number
  /** The first `app.swagger()`, the one that builds the document. */
  readonly openApiMs: number
  readonly openApiKiB: number
  readonly metricsFirstMs: number
  readonly metricsMedianMs: number
  readonly metricsKiB: number
  readonly metricsSeries: number
  /** How long the gateway refused calls with 503 (overload guard) after the OpenAPI generation. */
  readonly refusedMs: number
}

const SCRAPES = 10
const tools = Number(process.argv[2] ?? 1000)

const started = performance.now()
const app = await buildBenchGateway(tools)
await app.ready()
const ready = performance.now()

const document = JSON.stringify(app.swagger())
const openApiDone = performance.now()

let refusedMs = 0

/**
 * One call, retried while the gateway refuses with 503 (the synchronous start-up and OpenAPI
 * work just blocked the event loop, and its overload guard says so), for at most 10 s.
 */
async function call (gateway: FastifyInstance, id: string, payload: object): Promise<void> {
  for (let waited = 0; ; waited += 100) {
    const response = await gateway.inject({ method: 'POST', url: `/tools/${id}`, headers: { 'x-api-key': BENCH_API_KEY }, payload })
    if (response.statusCode < 500) return
    if (response.statusCode !== 503 || waited >= 10_000) throw new Error(`${id}: ${response.statusCode} ${response.body}`)
    refusedMs += 100
    await sleep(100)
  }
}

// Every tool called once with a good input and once with a bad one: two series per tool.
for (const id of app.catalog.ids()) {
  await call(app, id, id === 'echo' ? { text: 'hi' } : { key: 'k' })
  await call(app, id, { nope: true })
}

const scrapes: number[] = []
let metricsText = ''
for (let i = 0; i < SCRAPES; i++) {
  const t0 = performance.now()
  const response = await app.inject({ method: 'GET', url: '/metrics' })
  scrapes.push(performance.now() - t0)
  metricsText = response.body
}
await app.close()

const result: StartupResult = {
  tools,
  startupMs: ready - started,
  processToReadyMs: ready,
  openApiMs: openApiDone - ready,
  openApiKiB: Buffer.byteLength(document) / 1024,
  metricsFirstMs: scrapes[0]!,
  metricsMedianMs: median(scrapes),
  metricsKiB: Buffer.byteLength(metricsText) / 1024,
  metricsSeries: metricsText.split('\n').filter(line => line !== '' && !line.startsWith('#')).length,
  refusedMs,
}
// The last line: the gateway's own warnings may come before it.
process.stdout.write(`\n${JSON.stringify(result)}\n`)
