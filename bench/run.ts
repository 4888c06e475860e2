/**
 * The benchmark suite: toolgate against node:http, a bare Fastify + zod route (the baseline),
 * the MCP SDK server and @hono/zod-openapi, what each production feature costs (features.ts),
 * then toolgate's scaling. `npm run bench` for the full run (minutes), `npm run bench:smoke`
 * for CI (seconds per target, nothing judged), `npm run bench:features` for the features group
 * alone (written into the latest full run's file in place of its features section).
 */
import { existsSync, readFileSync } from 'node:fs'
import { loadavg } from 'node:os'
import { runFeatures } from './lib/features.js'
import { judge } from './lib/checks.js'
import { describeMachine } from './lib/machine.js'
import { measureGroup, type Measurement } from './lib/measure.js'
import { planFrom } from './lib/plan.js'
import { render, save, withRatios, type Report } from './lib/report.js'
import { runScaling } from './lib/scaling.js'
import { BASELINE_ID, TARGETS } from './lib/targets.js'

const plan = planFrom(process.argv.slice(2))
const log = (line: string): void => { process.stderr.write(`${line}\n`) }
const started = Date.now()
const loadBefore = loadavg()[0]!
const oneMinuteLoad = (): number => loadavg()[0]!

if (process.argv.includes('--features')) {
  const features = await runFeatures(plan, log, oneMinuteLoad)
  if (!existsSync(plan.resultsFile)) throw new Error(`${plan.resultsFile} holds no full run to add the features to: run \`npm run bench\` first`)
  const last = JSON.parse(readFileSync(plan.resultsFile, 'utf8')) as Report
  const report: Report = { ...last, features, checks: judge(last.comparison, last.scaling, features) }
  save(report)
  process.stdout.write(render(report))
  process.exit(brokenIn(features.measurements) ? 1 : 0)
}

log(`comparison: ${TARGETS.map(t => t.id).join(', ')}`)
const comparison = await measureGroup(TARGETS, plan, log)
const features = await runFeatures(plan, log, oneMinuteLoad)
const scaling = await runScaling(plan, log)

const report: Report = {
  generatedAt: new Date().toISOString(),
  command: plan.smoke ? 'npm run bench:smoke' : 'npm run bench',
  machine: describeMachine(),
  loadAverage: [loadBefore, loadavg()[0]!],
  plan,
  baseline: BASELINE_ID,
  comparison: withRatios(comparison, BASELINE_ID),
  scaling,
  checks: judge(comparison, scaling, features),
  features,
}
save(report)
process.stdout.write(render(report))

log(`results in ${plan.resultsFile}; ${((Date.now() - started) / 1000).toFixed(0)} s in all`)
if (brokenIn([...comparison, ...features.measurements, ...scaling.byToolCount])) process.exitCode = 1

/** A run that saw errors or non-2xx answers measured something else: it fails, smoke or not. */
function brokenIn (measurements: readonly Measurement[]): boolean {
  const broken = measurements.filter(m => m.errors + m.non2xx > 0 || m.requestsPerSec === 0)
  if (broken.length > 0) log(`FAILED: errors, non-2xx answers or no answers from ${broken.map(m => m.id).join(', ')}`)
  return broken.length > 0
}
