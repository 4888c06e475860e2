/** The issue's targets, judged on one run's numbers. Printed, never failed on: numbers vary. */
import type { FeatureReport } from './features.js'
import type { Measurement } from './measure.js'
import type { ScalingResult } from './scaling.js'
import { BASELINE_ID } from './targets.js'

export interface Check {
  readonly name: string
  readonly value: string
  readonly met: boolean
}

const x = (n: number): string => `${n.toFixed(2)}x`
const ms = (n: number): string => `${n.toFixed(1)} ms`

export function judge (comparison: readonly Measurement[], scaling: ScalingResult, features?: FeatureReport): Check[] {
  const find = (id: string): Measurement => {
    const found = comparison.find(m => m.id === id)
    if (found === undefined) throw new Error(`no measurement of ${id}`)
    return found
  }
  const [base, gate, hono, mcp] = [BASELINE_ID, 'toolgate', 'hono-zod-openapi', 'mcp-sdk'].map(find) as [Measurement, Measurement, Measurement, Measurement]
  const counts = scaling.byToolCount
  const fewest = counts[0]!
  const most = counts[counts.length - 1]!
  const { startup, leak } = scaling
  const [rssFirst, rssTotal] = leak.after.map(m => m.rssMiB ?? NaN) as [number, number]
  const rssGrowth = (rssTotal - rssFirst) / rssFirst
  return [
    { name: 'toolgate req/s >= 0.85x baseline', value: x(gate.requestsPerSec / base.requestsPerSec), met: gate.requestsPerSec >= 0.85 * base.requestsPerSec },
    { name: 'toolgate p99 <= 1.5x baseline', value: x(gate.p99Ms / base.p99Ms), met: gate.p99Ms <= 1.5 * base.p99Ms },
    { name: 'toolgate ahead of @hono/zod-openapi', value: x(gate.requestsPerSec / hono.requestsPerSec), met: gate.requestsPerSec > hono.requestsPerSec },
    { name: 'toolgate >= 8x the MCP SDK server', value: x(gate.requestsPerSec / mcp.requestsPerSec), met: gate.requestsPerSec >= 8 * mcp.requestsPerSec },
    {
      name: `${scaling.toolCounts[counts.length - 1]} tools cost <= 5% of req/s vs ${scaling.toolCounts[0]}`,
      value: `${((1 - most.requestsPerSec / fewest.requestsPerSec) * 100).toFixed(1)}%`,
      met: most.requestsPerSec >= 0.95 * fewest.requestsPerSec,
    },
    { name: `start-up with ${startup.tools} tools < 2 s`, value: ms(startup.startupMs), met: startup.startupMs < 2000 },
    { name: 'OpenAPI generation < 1 s', value: ms(startup.openApiMs), met: startup.openApiMs < 1000 },
    { name: '/metrics scrape < 100 ms (median)', value: `${ms(startup.metricsMedianMs)} (first ${ms(startup.metricsFirstMs)})`, met: startup.metricsMedianMs < 100 },
    {
      name: `RSS after ${leak.calls[1]} calls within 10% of after ${leak.calls[0]}`,
      value: `${rssFirst.toFixed(1)} -> ${rssTotal.toFixed(1)} MiB (${rssGrowth >= 0 ? '+' : ''}${(rssGrowth * 100).toFixed(1)}%)`,
      met: Math.abs(rssGrowth) <= 0.10,
    },
    ...(features?.ratios ?? []).filter(r => r.met !== undefined).map(r => ({
      name: `${r.feature}: req/s >= ${r.minRate}x${r.maxCpu === undefined ? '' : `, CPU per request <= ${r.maxCpu}x`}`,
      value: `${x(r.rate)}${r.maxCpu === undefined ? '' : `, CPU ${x(r.cpu)}`}`,
      met: r.met === true,
    })),
  ]
}
