/**
 * Measure a group of targets side by side, in rounds: each round starts every target afresh,
 * warms each up, then measures each once, in an order rotated from round to round, so drift
 * in the machine hits all alike.
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

export async function measureGroup (targets: readonly Target[], plan: Plan, log: (line: string) => void): Promise<Measurement[]> {
  const runs = new Map<string, LoadResult[]>(targets.map(t => [t.id, []]))
  const rss = new Map<string, number | undefined>()
  for (let round = 1; round <= plan.rounds; round++) {
    // Fresh processes every round: one process of the same server was seen to run a tenth
    // faster or slower than the next (JIT and memory-layout luck), and one process per target
    // would make that luck the result.
    const servers: RunningServer[] = []
    try {
      for (const target of targets) servers.push(await startServer(target))
      const run = { connections: plan.connections }
      if (plan.warmupSec > 0) {
        for (const server of servers) await runLoad(loadSpecFor(server, { ...run, durationSec: plan.warmupSec, latencies: false }))
      }
      const ours = (): number => servers.reduce((sum, s) => sum + (processCpuSeconds(s.pid) ?? 0), 0) + ownCpuSeconds()
      // Each round starts one target later, so that no target keeps one place in the sequence.
      for (const server of rotate(servers, round - 1)) {
        if (!plan.smoke && !await waitForQuiet(BUSY_CORES, plan.patienceSec, ours)) log(`  the machine stayed busy for ${plan.patienceSec} s: measuring anyway`)
        const result = await runLoad(loadSpecFor(server, { ...run, durationSec: plan.durationSec }))
        log(`  round ${round}/${plan.rounds} ${server.target.id}: ${Math.round(result.requestsPerSec)} req/s, p99 ${result.p99Ms.toFixed(2)} ms, ${cpuText(result.cpu)}`)
        runs.get(server.target.id)!.push(result)
        rss.set(server.target.id, rssMiB(server.pid))
      }
    } finally {
      for (const server of servers) stopServer(server)
    }
  }
  return targets.map(target => summarise(target, runs.get(target.id)!, rss.get(target.id)))
}

function rotate<T> (items: readonly T[], by: number): T[] {
  const start = by % Math.max(1, items.length)
  return [...items.slice(start), ...items.slice(0, start)]
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
function summarise (target: Target, all: readonly LoadResult[], rssAfterLastRun: number | undefined): Measurement {
  const clean = all.filter(r => r.cpu.others <= BUSY_CORES)
  const runs = clean.length > 0 ? clean : all
  const rates = runs.map(r => r.requestsPerSec)
  return {
    id: target.id,
    label: target.label,
    cleanRuns: clean.length,
    requestsPerSec: median(rates),
    p50Ms: median(runs.map(r => r.p50Ms)),
    p99Ms: median(runs.map(r => r.p99Ms)),
    cpu: { server: median(runs.map(r => r.cpu.server)), load: median(runs.map(r => r.cpu.load)), others: median(runs.map(r => r.cpu.others)) },
    errors: all.reduce((sum, r) => sum + r.errors, 0),
    non2xx: all.reduce((sum, r) => sum + r.non2xx, 0),
    spread: spread(rates),
    rssMiB: rssAfterLastRun,
    runs: all,
  }
}
