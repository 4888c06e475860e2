/**
 * PromQL assertions through a real Prometheus's HTTP API (`/api/v1/query`), for
 * scripts/prometheus-e2e.sh:
 *   tsx scripts/prometheus-assert.ts wait      PROM_URL QUERY VALUE    until QUERY returns VALUE (30 s)
 *   tsx scripts/prometheus-assert.ts calls     PROM_URL TALLY_FILE     the call counts match the tally
 *   tsx scripts/prometheus-assert.ts dashboard PROM_URL DASHBOARD.json every `expr` in it runs, with data
 *   tsx scripts/prometheus-assert.ts rules     PROM_URL COUNT          COUNT loaded rules, each evaluated without error
 * The tally has one line per call sent, `tool<TAB>outcome`; what Prometheus must report is
 * computed from it and from the tools' own declarations (their effects labels).
 */
import { readFileSync } from 'node:fs'
import { setTimeout as sleep } from 'node:timers/promises'
import { OUTCOMES } from '../src/index.js'
import { loadToolsFromDir } from '../src/services/loading/loader.js'

interface Sample { readonly metric: Record<string, string>, readonly value: number }
type QueryBody = { status: string, errorType?: string, error?: string, data?: { resultType: string, result: unknown } }

async function run (prom: string, expr: string): Promise<QueryBody['data'] & object> {
  const response = await fetch(`${prom}/api/v1/query?query=${encodeURIComponent(expr)}`)
  const body = await response.json() as QueryBody
  if (body.status !== 'success' || body.data === undefined) throw new Error(`${expr}\n  -> ${body.errorType ?? response.status}: ${body.error ?? 'no data'}`)
  return body.data
}

async function vector (prom: string, expr: string): Promise<Sample[]> {
  const data = await run(prom, expr)
  if (data.resultType !== 'vector') throw new Error(`${expr}: a ${data.resultType}, not a vector`)
  return (data.result as Array<{ metric: Record<string, string>, value: [number, string] }>).map(r => ({ metric: r.metric, value: Number(r.value[1]) }))
}

/** Assert that `expr`, keyed by `by`, returns exactly `expected` (every key, no other). */
async function expectVector (prom: string, expr: string, by: readonly string[], expected: ReadonlyMap<string, number>): Promise<void> {
  const observed = new Map((await vector(prom, expr)).map(s => [by.map(l => s.metric[l] ?? '').join('/'), s.value]))
  const show = (m: ReadonlyMap<string, number>): string => JSON.stringify(Object.fromEntries([...m].filter(([, v]) => v !== 0).sort()))
  const keys = new Set([...observed.keys(), ...expected.keys()])
  const wrong = [...keys].filter(k => observed.get(k) !== expected.get(k))
  console.log(`  ${expr}\n    -> ${show(observed)} (zeros omitted; ${observed.size} series)`)
  if (wrong.length > 0) throw new Error(`${expr}: expected ${show(expected)} over ${expected.size} series; differs at ${wrong.join(', ')}`)
}

async function expectScalar (prom: string, expr: string, expected: number): Promise<void> {
  const samples = await vector(prom, expr)
  console.log(`  ${expr}\n    -> ${samples.map(s => s.value).join(', ') || '(empty)'}`)
  if (samples.length !== 1 || samples[0]!.value !== expected) throw new Error(`${expr}: expected ${expected}`)
}

async function waitFor (prom: string, expr: string, value: number, seconds = 30): Promise<void> {
  const deadline = Date.now() + seconds * 1000
  let last = ''
  while (Date.now() < deadline) {
    try {
      const samples = await vector(prom, expr)
      last = samples.map(s => s.value).join(',')
      if (samples.length === 1 && samples[0]!.value === value) return
    } catch (error) { last = (error as Error).message }
    await sleep(250)
  }
  throw new Error(`${expr} did not reach ${value} within ${seconds} s (last: ${last || 'empty'})`)
}

const count = (map: Map<string, number>, key: string, n = 1): void => { map.set(key, (map.get(key) ?? 0) + n) }

async function assertCalls (prom: string, tallyFile: string): Promise<void> {
  const tools = await loadToolsFromDir('tools')
  const effectsOf = new Map(tools.map(t => [t.id, t.effectsLabel]))
  const calls = readFileSync(tallyFile, 'utf8').split('\n').filter(l => l !== '').map(l => {
    const [tool, outcome] = l.split('\t') as [string, string]
    if (!effectsOf.has(tool)) throw new Error(`tally names an unknown tool ${tool}`)
    return { tool, outcome, effects: effectsOf.get(tool)! }
  })
  await waitFor(prom, 'sum(toolgate_tool_calls_total)', calls.length)

  const byEffects = new Map(tools.map(t => [t.effectsLabel, 0]))
  const financialByOutcome = new Map(OUTCOMES.map(o => [o, 0]))
  const byToolOutcome = new Map<string, number>()
  for (const call of calls) {
    count(byEffects, call.effects)
    if (call.effects.split(',').includes('financial')) count(financialByOutcome, call.outcome)
    count(byToolOutcome, `${call.tool}/${call.outcome}`)
  }
  console.log(`${calls.length} calls sent; Prometheus reports:`)
  await expectVector(prom, 'sum by (effects) (toolgate_tool_calls_total)', ['effects'], byEffects)
  await expectVector(prom, 'sum by (outcome) (toolgate_tool_calls_total{effects=~".*financial.*"})', ['outcome'], financialByOutcome)
  await expectVector(prom, 'sum by (tool, outcome) (toolgate_tool_calls_total) > 0', ['tool', 'outcome'], byToolOutcome)
  await expectScalar(prom, 'sum(toolgate_tool_duration_seconds_count)', calls.length)
  // Unknown tool names were sent too: still exactly one series per tool and outcome.
  await expectScalar(prom, 'count(toolgate_tool_calls_total)', tools.length * OUTCOMES.length)
  await expectScalar(prom, 'sum(toolgate_idempotent_replays_total)', calls.filter(c => c.outcome === 'replayed').length)
  await expectScalar(prom, 'sum(toolgate_auth_failures_total)', calls.filter(c => c.outcome === 'unauthenticated').length)
  await expectScalar(prom, 'sum(toolgate_tool_calls_in_flight)', 0)
  await expectScalar(prom, 'toolgate_queue_length', 0)
  const p99 = await vector(prom, 'histogram_quantile(0.99, sum by (le) (rate(toolgate_tool_duration_seconds_bucket{effects=~".*irreversible.*"}[5m])))')
  console.log(`  p99 latency of irreversible tools -> ${p99.map(s => s.value).join(', ')} s`)
  if (p99.length !== 1 || !(p99[0]!.value > 0 && p99[0]!.value <= 120)) throw new Error('p99 latency of irreversible tools: expected one value in (0, 120] s')
}

/** Grafana's variables, as Prometheus cannot read them. */
function withoutVariables (expr: string): string {
  return expr.replaceAll('$__rate_interval', '1m').replaceAll('$__interval', '15s').replaceAll('$__range', '5m')
    .replace(/\$\{?(\w+)(?::\w+)?\}?/g, '.*')
}

function exprsOf (node: unknown, found: string[] = []): string[] {
  if (Array.isArray(node)) for (const item of node) exprsOf(item, found)
  else if (typeof node === 'object' && node !== null) {
    for (const [key, value] of Object.entries(node)) {
      if (key === 'expr' && typeof value === 'string') found.push(value)
      else exprsOf(value, found)
    }
  }
  return found
}

async function assertDashboard (prom: string, file: string): Promise<void> {
  const exprs = exprsOf(JSON.parse(readFileSync(file, 'utf8')))
  if (exprs.length === 0) throw new Error(`${file} holds no PromQL expression`)
  const failures: string[] = []
  for (const expr of exprs) {
    try {
      const data = await run(prom, withoutVariables(expr))
      const series = Array.isArray(data.result) ? data.result.length : 1
      // After the calls above every panel has data: empty means a wrong metric or label name.
      if (series === 0) throw new Error(`${expr}\n  -> no series (a misspelt metric or label?)`)
      console.log(`  ok (${data.resultType}, ${series} series): ${expr}`)
    } catch (error) { failures.push((error as Error).message) }
  }
  if (failures.length > 0) throw new Error(`${failures.length} of ${exprs.length} dashboard expressions failed:\n${failures.join('\n')}`)
  console.log(`${exprs.length} expressions of ${file} ran without error`)
}

interface RuleState { readonly name: string, readonly health: string, readonly lastError?: string, readonly lastEvaluation: string }

async function assertRules (prom: string, expected: number): Promise<void> {
  const deadline = Date.now() + 30_000
  for (;;) {
    const body = await (await fetch(`${prom}/api/v1/rules`)).json() as { data: { groups: Array<{ rules: RuleState[] }> } }
    const rules = body.data.groups.flatMap(g => g.rules)
    const failed = rules.filter(r => r.health === 'err')
    if (failed.length > 0) throw new Error(`rules failed to evaluate: ${failed.map(r => `${r.name}: ${r.lastError}`).join('; ')}`)
    const evaluated = rules.filter(r => r.health === 'ok' && !r.lastEvaluation.startsWith('0001-'))
    if (rules.length === expected && evaluated.length === expected) {
      console.log(`${expected} alerting rules evaluated without error: ${rules.map(r => r.name).join(', ')}`)
      return
    }
    if (Date.now() > deadline) throw new Error(`expected ${expected} rules evaluated, got ${evaluated.length} of ${rules.length}`)
    await sleep(250)
  }
}

const [command, prom, arg, value] = process.argv.slice(2)
try {
  if (prom === undefined || arg === undefined) throw new Error('usage: prometheus-assert.ts wait|calls|dashboard PROM_URL ARG [VALUE]')
  if (command === 'wait') await waitFor(prom, arg, Number(value))
  else if (command === 'calls') await assertCalls(prom, arg)
  else if (command === 'dashboard') await assertDashboard(prom, arg)
  else if (command === 'rules') await assertRules(prom, Number(arg))
  else throw new Error(`unknown command ${command}`)
} catch (error) {
  console.error(`prometheus-assert: ${(error as Error).message}`)
  process.exitCode = 1
}
