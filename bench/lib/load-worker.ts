/**
 * The load generator, run as its own process on its own core: one autocannon run, printed as
 * JSON. Latencies are kept exactly (autocannon's own histogram rounds to whole milliseconds,
 * too coarse to compare p99s of 2 and 3 ms). CPU shares are taken over the run itself.
 */
import autocannon from 'autocannon'
import { performance } from 'node:perf_hooks'
import { machineCpuSeconds, processCpuSeconds } from './cpu.js'
import type { LoadResult, LoadSpec } from './load.js'
import { percentile } from './stats.js'

const spec = JSON.parse(process.argv[2]!) as LoadSpec
const latencies: number[] = []

const ownCpu = (): number => { const { user, system } = process.cpuUsage(); return (user + system) / 1e6 }
const snapshot = () => ({ at: performance.now() / 1000, own: ownCpu(), server: processCpuSeconds(spec.serverPid) ?? NaN, machine: machineCpuSeconds() ?? NaN })
const before = snapshot()

const instance = autocannon({
  url: spec.url,
  method: 'POST',
  headers: spec.headers,
  body: spec.body,
  connections: spec.connections,
  ...(spec.amount === undefined ? { duration: spec.durationSec } : { amount: spec.amount }),
}, (error, result) => {
  if (error !== null) throw error
  const after = snapshot()
  const seconds = after.at - before.at
  const [own, server, machine] = [after.own - before.own, after.server - before.server, after.machine - before.machine]
  latencies.sort((a, b) => a - b)
  const output: LoadResult = {
    requestsPerSec: result.requests.total / result.duration,
    p50Ms: percentile(latencies, 0.5),
    p99Ms: percentile(latencies, 0.99),
    ok: result['2xx'],
    errors: result.errors + result.timeouts,
    non2xx: result.non2xx,
    durationSec: result.duration,
    cpu: { server: server / seconds, load: own / seconds, others: Math.max(0, machine - own - server) / seconds },
  }
  process.stdout.write(JSON.stringify(output))
})

if (spec.latencies) {
  instance.on('response', (_client, status, _bytes, ms) => { if (status >= 200 && status < 300) latencies.push(ms) })
}
