/** One load run: autocannon in its own process on the load core, against one target. */
import { LOAD_CORE, runScript } from './processes.js'
import type { RunningServer } from './servers.js'

export interface LoadSpec {
  readonly url: string
  readonly headers: Readonly<Record<string, string>>
  readonly body: string
  readonly connections: number
  readonly durationSec: number
  /** The server's PID, whose CPU use the run reports. */
  readonly serverPid: number
  /** Stop after this many requests instead of after `durationSec`. */
  readonly amount?: number
  /** Keep every latency (not needed for long leak runs). */
  readonly latencies: boolean
}

export interface LoadResult {
  readonly requestsPerSec: number
  readonly p50Ms: number
  readonly p99Ms: number
  readonly ok: number
  /** Connection errors and timeouts. */
  readonly errors: number
  readonly non2xx: number
  readonly durationSec: number
  /**
   * Cores' worth of CPU used during the run by the server (near 1: it set the pace), the load
   * generator (near 1: it did) and every other process (above ~0.2: a neighbour disturbed it).
   */
  readonly cpu: CpuShares
}

export interface CpuShares {
  readonly server: number
  readonly load: number
  readonly others: number
}

export async function runLoad (spec: LoadSpec): Promise<LoadResult> {
  return JSON.parse(await runScript(LOAD_CORE, ['bench/lib/load-worker.ts', JSON.stringify(spec)])) as LoadResult
}

export function loadSpecFor (server: RunningServer, run: Pick<LoadSpec, 'connections' | 'durationSec'> & Partial<LoadSpec>): LoadSpec {
  const { headers, body } = server.target.request
  return { url: server.url, headers, body, serverPid: server.pid, latencies: true, ...run }
}
