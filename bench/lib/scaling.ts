/**
 * toolgate as it grows: req/s with more tools, start-up, OpenAPI and `/metrics` with 1000
 * tools, and memory after many calls (a leak check).
 */
import { loadSpecFor, runLoad } from './load.js'
import { measureGroup, type Measurement } from './measure.js'
import type { Plan } from './plan.js'
import { runScript, SERVER_CORE } from './processes.js'
import { memoryOf, startServer, stopServer, type MemoryReport } from './servers.js'
import type { StartupResult } from './startup-probe.js'
import { toolgateTarget } from './targets.js'

export interface LeakResult {
  readonly calls: readonly [number, number]
  readonly after: readonly [MemoryReport, MemoryReport]
  readonly seconds: number
}

export interface ScalingResult {
  readonly toolCounts: readonly number[]
  readonly byToolCount: readonly Measurement[]
  readonly startup: StartupResult
  readonly leak: LeakResult
}

export async function runScaling (plan: Plan, log: (line: string) => void): Promise<ScalingResult> {
  log(`req/s by tool count (${plan.toolCounts.join(', ')})`)
  const byToolCount = await measureGroup(plan.toolCounts.map(toolgateTarget), plan, log)
  const tools = Math.max(...plan.toolCounts)
  log(`start-up, OpenAPI and /metrics with ${tools} tools`)
  const printed = (await runScript(SERVER_CORE, ['bench/lib/startup-probe.ts', String(tools)])).trim().split('\n')
  const startup = JSON.parse(printed[printed.length - 1]!) as StartupResult
  log(`leak check: memory after ${plan.leakCalls[0]} and ${plan.leakCalls[1]} calls`)
  const leak = await leakCheck(plan)
  return { toolCounts: plan.toolCounts, byToolCount, startup, leak }
}

async function leakCheck (plan: Plan): Promise<LeakResult> {
  const server = await startServer(toolgateTarget(1), ['--expose-gc'])
  try {
    const started = Date.now()
    const [first, total] = plan.leakCalls
    const calls = async (amount: number): Promise<MemoryReport> => {
      const result = await runLoad(loadSpecFor(server, { connections: plan.connections, durationSec: 0, amount, latencies: false }))
      if (result.errors + result.non2xx > 0) throw new Error(`leak check: ${result.errors} errors, ${result.non2xx} non-2xx`)
      return await memoryOf(server)
    }
    const afterFirst = await calls(first)
    const afterTotal = await calls(total - first)
    return { calls: plan.leakCalls, after: [afterFirst, afterTotal], seconds: (Date.now() - started) / 1000 }
  } finally {
    stopServer(server)
  }
}
