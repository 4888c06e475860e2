/**
 * What fronting an HTTP API costs: one local JSON endpoint (`GET /items/{id}`), called
 *  - directly (the floor),
 *  - through a bare reverse proxy, Fastify with @fastify/http-proxy (the reference: validates nothing),
 *  - through toolgate, as the operation `getItem` of its OpenAPI document (`POST /tools/svc_get_item`):
 *    input validated against the document, the request built from declared parameters, the
 *    answer read, parsed and checked against its schema, metrics counted.
 * The same autocannon load, in interleaved rounds; the front process (proxy or toolgate) and the
 * endpoint share the server core, the load generator has its own.
 *
 *   npx tsx bench/upstream-http.ts [--rounds 3] [--seconds 5] [--connections 16]
 */
import type { ChildProcess } from 'node:child_process'
import { numberFlag } from './lib/args.js'
import { runLoad, type LoadResult } from './lib/load.js'
import { startTarget, stop } from './lib/processes.js'
import { BENCH_API_KEY } from './targets/echo.js'

const rounds = numberFlag('rounds', 3)
const seconds = numberFlag('seconds', 5)
const connections = numberFlag('connections', 16)

const children: ChildProcess[] = []
async function start (file: string, env: Record<string, string> = {}): Promise<{ url: string, pid: number }> {
  return await startTarget(file, children, env)
}

interface Path {
  readonly id: string
  readonly url: string
  readonly pid: number
  readonly headers: Record<string, string>
  readonly body: string
}

try {
  const endpoint = await start('bench/targets/json-endpoint.ts')
  const proxy = await start('bench/targets/http-proxy.ts', { UPSTREAM_URL: endpoint.url })
  const gateway = await start('bench/targets/toolgate-openapi.ts', { UPSTREAM_URL: endpoint.url })
  const json = { 'content-type': 'application/json' }
  const paths: Path[] = [
    { id: 'direct', url: `${endpoint.url}/items/42`, pid: endpoint.pid, headers: json, body: '{}' },
    { id: '@fastify/http-proxy', url: `${proxy.url}/items/42`, pid: proxy.pid, headers: json, body: '{}' },
    { id: 'toolgate', url: `${gateway.url}/tools/svc_get_item`, pid: gateway.pid, headers: { ...json, 'x-api-key': BENCH_API_KEY }, body: JSON.stringify({ id: '42' }) },
  ]
  // Each path answers right before anything is measured.
  for (const path of paths) {
    const answer = await fetch(path.url, { method: 'POST', headers: path.headers, body: path.body })
    const item = await answer.json() as { id?: string }
    if (answer.status !== 200 || item.id !== '42') throw new Error(`${path.id} answered ${answer.status} ${JSON.stringify(item)}`)
  }
  const run = async (path: Path, durationSec: number): Promise<LoadResult> => await runLoad({ url: path.url, headers: path.headers, body: path.body, connections, durationSec, serverPid: path.pid, latencies: true })
  for (const path of paths) await run(path, 1)
  const results = new Map<string, LoadResult[]>(paths.map(path => [path.id, []]))
  for (let round = 0; round < rounds; round++) {
    for (const path of paths) {
      const result = await run(path, seconds)
      if (result.non2xx > 0 || result.errors > 0) throw new Error(`${path.id}: ${result.non2xx} non-2xx answers, ${result.errors} errors`)
      results.get(path.id)!.push(result)
    }
  }
  const median = (values: number[]): number => values.sort((a, b) => a - b)[Math.floor(values.length / 2)]!
  const summary = paths.map(path => {
    const samples = results.get(path.id)!
    const rps = median(samples.map(s => s.requestsPerSec))
    return { id: path.id, rps, p50: median(samples.map(s => s.p50Ms)), p99: median(samples.map(s => s.p99Ms)), cpuUs: median(samples.map(s => s.cpu.server / s.requestsPerSec * 1e6)), others: median(samples.map(s => s.cpu.others)) }
  })
  const reference = summary[1]!
  process.stdout.write(`one JSON endpoint, ${connections} connections, ${rounds} rounds of ${seconds} s (median round); ratios to the bare proxy\n`)
  for (const row of summary) {
    process.stdout.write(`${row.id.padEnd(20)} ${Math.round(row.rps).toString().padStart(6)} req/s  ${(row.rps / reference.rps).toFixed(2)}x  p50 ${row.p50.toFixed(2)} ms  p99 ${row.p99.toFixed(2)} ms  front CPU ${row.cpuUs.toFixed(1)} us/req  others ${row.others.toFixed(2)} cores\n`)
  }
} finally {
  for (const child of children) stop(child)
}
