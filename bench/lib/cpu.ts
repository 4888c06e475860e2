/**
 * CPU accounting from /proc, to tell a slow target from a busy machine: the share of a core
 * the server, the load generator and everything else used during a run.
 */
import { execFileSync } from 'node:child_process'
import { readFileSync } from 'node:fs'
import { setTimeout as sleep } from 'node:timers/promises'

const CLOCK_TICKS = (() => {
  try { return Number(execFileSync('getconf', ['CLK_TCK'], { encoding: 'utf8' })) || 100 } catch { return 100 }
})()

/** CPU seconds (user + system) a live process has used (undefined without /proc). */
export function processCpuSeconds (pid: number): number | undefined {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8')
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ')
    return (Number(fields[11]) + Number(fields[12])) / CLOCK_TICKS
  } catch {
    return undefined
  }
}

/** CPU seconds the whole machine has been busy, over all cores (undefined without /proc). */
export function machineCpuSeconds (): number | undefined {
  try {
    const [, user, nice, system, , , irq, softirq, steal] = readFileSync('/proc/stat', 'utf8').split('\n')[0]!.trim().split(/\s+/).map(Number)
    return (user! + nice! + system! + irq! + softirq! + steal!) / CLOCK_TICKS
  } catch {
    return undefined
  }
}

/** Cores' worth of CPU the rest of the machine uses right now, over `sampleMs`. */
export async function othersLoad (sampleMs: number, ours: () => number): Promise<number> {
  const machine = machineCpuSeconds()
  const own = ours()
  await sleep(sampleMs)
  const machineAfter = machineCpuSeconds()
  if (machine === undefined || machineAfter === undefined) return 0
  return Math.max(0, machineAfter - machine - (ours() - own)) / (sampleMs / 1000)
}

/**
 * Wait until other processes use less than `maxCores` for a full second, for at most
 * `patienceSec`: a neighbour's compile or test run would otherwise land in one target's run.
 * Returns whether the machine was quiet.
 */
export async function waitForQuiet (maxCores: number, patienceSec: number, ours: () => number): Promise<boolean> {
  for (let waited = 0; waited < patienceSec; waited++) {
    if (await othersLoad(1000, ours) < maxCores) return true
  }
  return false
}
