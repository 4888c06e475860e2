/**
 * Measure a group of targets side by side: all started, each warmed up, then the measured
 * rounds interleaved (every target once per round), so drift in the machine hits all alike.
 * Each measured run waits for a quiet machine first (a while at most) and reports what else ran.
 */
import { waitForQuiet, processCpuSeconds } from './cpu.js'
import { loadSpecFor, runLoad, type CpuShares, type LoadResult } from './load.js'
import type { Plan } from './plan.js'
import { rssMiB } from './processes.js'
import { startServer, stopServer, type RunningServer } from './servers.js'
import { median, spread } from './stats.js'
import type { Target } from './targets.js'

export interface Measurement {
  readonly id: string
  readonly label: string
  /** Runs that no neighbour disturbed, and all runs: the medians below are of the former, when any. */
  readonly cleanRuns: number
  /** Medians over the measured runs. */
  readonly requestsPerSec: number
  readonly p50Ms: number
  readonly p99Ms: number
  readonly cpu: CpuShares
  /** Summed over all measured runs, disturbed or not. */
  readonly errors: number
  readonly non2xx: number
  /** (max - min) / median of the runs' req/s. */
  readonly spread: number
  /** Of the server, after its last run. */
  readonly rssMiB: number | undefined
  readonly runs: readonly LoadResult[]
}

/** Other processes above this many cores make a run suspect. */
export const BUSY_CORES = 0.2
const PATIENCE_SEC = 30

export async function measureGroup (targets: readonly Target[], plan: Plan, log: (line: string) => void): Promise<Measurement[]> {
  const servers: RunningServer[] = []
  try {
    for (const target of targets) servers.push(await startServer(target))
    const run = { connections: plan.connections }
    if (plan.warmupSec > 0) {
      for (const server of servers) {
        log(`  warm-up  ${server.target.id} (${plan.warmupSec} s)`)
        await runLoad(loadSpecFor(server, { ...run, durationSec: plan.warmupSec, latencies: false }))
      }
    }
    const ours = (): number => servers.reduce((sum, s) => sum + (processCpuSeconds(s.pid) ?? 0), 0) + ownCpuSeconds()
    const runs = new Map<string, LoadResult[]>(targets.map(t => [t.id, []]))
    for (let round = 1; round <= plan.rounds; round++) {
      for (const server of servers) {
        if (!plan.smoke && !await waitForQuiet(BUSY_CORES, PATIENCE_SEC, ours)) log(`  the machine stayed busy for ${PATIENCE_SEC} s: measuring anyway`)
        const result = await runLoad(loadSpecFor(server, { ...run, durationSec: plan.durationSec }))
        log(`  round ${round}/${plan.rounds} ${server.target.id}: ${Math.round(result.requestsPerSec)} req/s, p99 ${result.p99Ms.toFixed(2)} ms, ${cpuText(result.cpu)}`)
        runs.get(server.target.id)!.push(result)
      }
    }
    return servers.map(server => summarise(server, runs.get(server.target.id)!))
  } finally {
    for (const server of servers) stopServer(server)
  }
}

function ownCpuSeconds (): number {
  const { user, system } = process.cpuUsage()
  return (user + system) / 1e6
}

/** Shares of a core: server / load generator / everything else. */
export function cpuText (cpu: CpuShares): string {
  return `CPU ${[cpu.server, cpu.load, cpu.others].map(share => `${Math.round(share * 100)}%`).join(' / ')}`
}

/** A disturbed run measures the neighbour as much as the target: leave it out when others are clean. */
function summarise (server: RunningServer, all: readonly LoadResult[]): Measurement {
  const clean = all.filter(r => r.cpu.others <= BUSY_CORES)
  const runs = clean.length > 0 ? clean : all
  const rates = runs.map(r => r.requestsPerSec)
  return {
    id: server.target.id,
    label: server.target.label,
    cleanRuns: clean.length,
    requestsPerSec: median(rates),
    p50Ms: median(runs.map(r => r.p50Ms)),
    p99Ms: median(runs.map(r => r.p99Ms)),
    cpu: { server: median(runs.map(r => r.cpu.server)), load: median(runs.map(r => r.cpu.load)), others: median(runs.map(r => r.cpu.others)) },
    errors: all.reduce((sum, r) => sum + r.errors, 0),
    non2xx: all.reduce((sum, r) => sum + r.non2xx, 0),
    spread: spread(rates),
    rssMiB: rssMiB(server.pid),
    runs: all,
  }
}
