/**
 * What an upstream credential costs a call: the same HTTP API fronted by toolgate three ways,
 * in interleaved rounds of the same autocannon load:
 *  - `static`: the file's header (`Authorization: Bearer ...`), the floor;
 *  - `client_credentials`: the gateway's own OAuth token, kept after the first call;
 *  - `identity`: the caller asserted in a header and a JWT the gateway signs per call.
 *
 *   npx tsx bench/upstream-credential.ts [--rounds 3] [--seconds 5] [--connections 16]
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

try {
  const endpoint = await start('bench/targets/json-endpoint.ts')
  const issuer = await start('bench/targets/token-endpoint.ts')
  const gateways: Array<{ readonly id: string, readonly env: Record<string, string> }> = [
    { id: 'static', env: { UPSTREAM_HEADERS: JSON.stringify({ Authorization: 'Bearer a-static-token-of-the-operator' }) } },
    { id: 'client_credentials', env: { UPSTREAM_AUTH: JSON.stringify({ type: 'client_credentials', tokenEndpoint: `${issuer.url}/token`, clientId: 'bench', clientSecret: 'bench-secret' }) } },
    { id: 'identity', env: { UPSTREAM_AUTH: JSON.stringify({ type: 'identity', headers: { 'X-User': '{principal.id}' }, jwt: { audience: endpoint.url } }) } },
  ]
  const paths = await Promise.all(gateways.map(async ({ id, env }) => ({ id, ...await start('bench/targets/toolgate-openapi.ts', { UPSTREAM_URL: endpoint.url, ...env }) })))
  const headers = { 'content-type': 'application/json', 'x-api-key': BENCH_API_KEY }
  const body = JSON.stringify({ id: '42' })
  for (const path of paths) {
    const answer = await fetch(`${path.url}/tools/svc_get_item`, { method: 'POST', headers, body })
    if (answer.status !== 200) throw new Error(`${path.id} answered ${answer.status} ${await answer.text()}`)
  }
  const run = async (path: typeof paths[number], durationSec: number): Promise<LoadResult> => await runLoad({ url: `${path.url}/tools/svc_get_item`, headers, body, connections, durationSec, serverPid: path.pid, latencies: true })
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
  const floor = median(results.get('static')!.map(s => s.requestsPerSec))
  const floorCpu = median(results.get('static')!.map(s => s.cpu.server / s.requestsPerSec * 1e6))
  process.stdout.write(`one JSON endpoint through toolgate, ${connections} connections, ${rounds} rounds of ${seconds} s (median round); ratios to the static header\n`)
  for (const path of paths) {
    const samples = results.get(path.id)!
    const rps = median(samples.map(s => s.requestsPerSec))
    const cpu = median(samples.map(s => s.cpu.server / s.requestsPerSec * 1e6))
    process.stdout.write(`${path.id.padEnd(20)} ${Math.round(rps).toString().padStart(6)} req/s  ${(rps / floor).toFixed(3)}x  p50 ${median(samples.map(s => s.p50Ms)).toFixed(2)} ms  gateway CPU ${cpu.toFixed(1)} us/call (${(cpu / floorCpu).toFixed(3)}x)\n`)
  }
  process.stdout.write(`tokens issued: ${await (await fetch(`${issuer.url}/count`)).text()}\n`)
} finally {
  for (const child of children) stop(child)
}
