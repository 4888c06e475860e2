/** The results as Markdown tables on stdout and as one JSON file. */
import { mkdirSync, writeFileSync } from 'node:fs'
import { dirname } from 'node:path'
import type { Check } from './checks.js'
import type { FeatureReport } from './features.js'
import type { Machine } from './machine.js'
import { BUSY_CORES, type Measurement } from './measure.js'
import type { Plan } from './plan.js'
import type { ScalingResult } from './scaling.js'
import { median } from './stats.js'

export interface Report {
  readonly generatedAt: string
  readonly command: string
  readonly machine: Machine
  /** 1-minute load average before and after: other work on the machine skews everything. */
  readonly loadAverage: readonly [number, number]
  readonly plan: Plan
  readonly baseline: string
  /**
   * `ratio` is of the medians; `roundRatios` pairs each round's run with the baseline's run of
   * the same round (the same minutes of the machine's life), a second view of the same runs.
   */
  readonly comparison: ReadonlyArray<Measurement & { readonly ratio: number, readonly p99Ratio: number, readonly roundRatios: readonly number[] }>
  readonly scaling: ScalingResult
  readonly checks: readonly Check[]
  /** What each production feature costs, as a ratio to the same gateway without it (its own group, timed apart). */
  readonly features?: FeatureReport
}

export function withRatios (measurements: readonly Measurement[], baselineId: string): Report['comparison'] {
  const base = measurements.find(m => m.id === baselineId)!
  return measurements.map(m => ({
    ...m,
    ratio: m.requestsPerSec / base.requestsPerSec,
    p99Ratio: m.p99Ms / base.p99Ms,
    roundRatios: m.runs.map((run, round) => run.requestsPerSec / base.runs[round]!.requestsPerSec),
  }))
}

export function render (report: Report): string {
  return [
    ...heading(report), '',
    comparisonTable(report), '',
    ...featureTables(report.features),
    toolCountTable(report.scaling), '',
    onceTable(report.scaling), '',
    ...disturbedWarning(report),
    verdictTable(report.checks, report.plan.smoke), '',
  ].join('\n')
}

export function save (report: Report): void {
  mkdirSync(dirname(report.plan.resultsFile), { recursive: true })
  writeFileSync(report.plan.resultsFile, JSON.stringify(report, null, 2) + '\n')
}

function heading ({ machine, plan, loadAverage, command }: Report): string[] {
  return [
    `toolgate benchmark${plan.smoke ? ' (SMOKE: numbers mean nothing)' : ''}`,
    `${machine.cpu}, ${machine.cores} cores, ${machine.memoryGiB} GiB, Node ${machine.node}; ${machine.pinning}`,
    `load average ${loadAverage.map(l => l.toFixed(2)).join(' before, ')} after (a busy machine skews every number)`,
    `${plan.connections} connections, median of ${plan.rounds} x ${plan.durationSec} s runs (the undisturbed ones, when any); ` +
      `each round on fresh server processes, each warmed up ${plan.warmupSec} s, in an order rotated from round to round; \`${command}\``,
  ]
}

const fixed = (n: number | undefined, digits: number): string => (n === undefined || Number.isNaN(n) ? '-' : n.toFixed(digits))
const rate = (n: number): string => Math.round(n).toLocaleString('en-US')
const RUN_HEAD = ['errors', 'non-2xx', 'RSS MiB', 'run spread', 'clean runs', 'CPU server / load / others']

/** Server / load generator / others are medians: a server well under 100% did not set the pace. */
function runCells (m: Measurement): string[] {
  const cpu = [m.cpu.server, m.cpu.load, m.cpu.others].map(share => `${fixed(share * 100, 0)}%`).join(' / ')
  return [String(m.errors), String(m.non2xx), fixed(m.rssMiB, 0), `${fixed(m.spread * 100, 1)}%`, `${m.cleanRuns}/${m.runs.length}`, cpu]
}

function comparisonTable (report: Report): string {
  return table(['target', 'req/s', 'x baseline', 'x baseline per round: median (range)', 'p50 ms', 'p99 ms', 'p99 x baseline', ...RUN_HEAD], report.comparison.map(m => [
    m.id === report.baseline ? `${m.label} (baseline)` : m.label,
    rate(m.requestsPerSec), fixed(m.ratio, 2), perRound(m.roundRatios), fixed(m.p50Ms, 2), fixed(m.p99Ms, 2), fixed(m.p99Ratio, 2), ...runCells(m),
  ]))
}

/** Each feature beside its reference, then the runs themselves. */
function featureTables (features: FeatureReport | undefined): string[] {
  if (features === undefined) return []
  const goal = (r: FeatureReport['ratios'][number]): string => (r.minRate === undefined ? 'none (measured)' : `req/s >= ${r.minRate}x${r.maxCpu === undefined ? '' : `, CPU/req <= ${r.maxCpu}x`}`)
  const ratios = table(['feature on', 'x req/s of its reference (the same without it)', 'per round: median (range)', 'p99 x', 'server CPU per request', 'goal', 'met'], features.ratios.map(r => [
    r.feature, fixed(r.rate, 2), perRound(r.roundRates), fixed(r.p99, 2), `${fixed(r.cpuUs, 1)} µs (${fixed(r.cpu, 2)}x)`, goal(r), r.met === undefined ? '-' : r.met ? 'yes' : 'NO',
  ]))
  const runs = table(['feature target', 'req/s', 'p50 ms', 'p99 ms', 'CPU µs/req', ...RUN_HEAD], features.measurements.map(m => [
    m.label, rate(m.requestsPerSec), fixed(m.p50Ms, 2), fixed(m.p99Ms, 2), fixed(m.cpu.server / m.requestsPerSec * 1e6, 1), ...runCells(m),
  ]))
  return [
    `Features, measured as their own group (${features.generatedAt}, load average ${features.loadAverage.map(l => l.toFixed(2)).join(' before, ')} after)${features.skipped.length === 0 ? '' : `; skipped: ${features.skipped.join('; ')}`}:`, '',
    ratios, '', runs, '',
  ]
}

function perRound (ratios: readonly number[]): string {
  return `${fixed(median(ratios), 2)} (${fixed(Math.min(...ratios), 2)}-${fixed(Math.max(...ratios), 2)})`
}

function toolCountTable ({ byToolCount }: ScalingResult): string {
  const reference = byToolCount[0]!.requestsPerSec
  return table(['toolgate', 'req/s', 'x 1 tool', 'p50 ms', 'p99 ms', ...RUN_HEAD], byToolCount.map(m => [
    m.label, rate(m.requestsPerSec), fixed(m.requestsPerSec / reference, 3), fixed(m.p50Ms, 2), fixed(m.p99Ms, 2), ...runCells(m),
  ]))
}

function onceTable ({ startup: s, leak }: ScalingResult): string {
  return table(['measure', 'value'], [
    [`start-up, ${s.tools} tools (buildApp + ready)`, `${fixed(s.startupMs, 0)} ms (${fixed(s.processToReadyMs, 0)} ms from process start)`],
    ['OpenAPI generation (first app.swagger())', `${fixed(s.openApiMs, 0)} ms, ${fixed(s.openApiKiB, 0)} KiB`],
    ['calls refused (503) right after it', `for ${fixed(s.refusedMs, 0)} ms`],
    [`/metrics scrape, all ${s.tools} tools called`, `median ${fixed(s.metricsMedianMs, 1)} ms, first ${fixed(s.metricsFirstMs, 1)} ms; ${s.metricsSeries} series, ${fixed(s.metricsKiB, 0)} KiB`],
    ...leak.after.map((m, i) => [`after ${leak.calls[i]!.toLocaleString('en-US')} calls`, `RSS ${fixed(m.rssMiB, 1)} MiB, heap after GC ${fixed(m.heapUsedMiB, 1)} MiB`]),
  ])
}

function disturbedWarning ({ comparison, scaling }: Report): string[] {
  const disturbed = [...comparison, ...scaling.byToolCount].filter(m => m.cleanRuns === 0)
  if (disturbed.length === 0) return []
  return [`DISTURBED: other processes used more than ${BUSY_CORES} of a core in every run of ${disturbed.map(m => m.id).join(', ')}; those numbers are not reliable.`, '']
}

function verdictTable (checks: readonly Check[], smoke: boolean): string {
  return table(['target', 'measured', smoke ? 'met (smoke: not judged)' : 'met'], checks.map(c => [c.name, c.value, c.met ? 'yes' : 'NO']))
}

function table (head: readonly string[], rows: ReadonlyArray<readonly string[]>): string {
  const line = (cells: readonly string[]): string => `| ${cells.join(' | ')} |`
  return [line(head), line(head.map(() => '---')), ...rows.map(line)].join('\n')
}
