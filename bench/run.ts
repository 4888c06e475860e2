/**
 * The benchmark suite: toolgate against node:http, a bare Fastify + zod route (the baseline),
 * the MCP SDK server and @hono/zod-openapi, then toolgate's scaling. `npm run bench` for the
 * full run (minutes), `npm run bench:smoke` for CI (seconds per target, nothing judged).
 */
import { loadavg } from 'node:os'
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

log(`comparison: ${TARGETS.map(t => t.id).join(', ')}`)
const comparison = await measureGroup(TARGETS, plan, log)
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
  checks: judge(comparison, scaling),
}
save(report)
process.stdout.write(render(report))

// A run that saw errors or non-2xx answers measured something else: it fails, smoke or not.
const broken = [...comparison, ...scaling.byToolCount].filter((m: Measurement) => m.errors + m.non2xx > 0 || m.requestsPerSec === 0)
log(`results in ${plan.resultsFile}; ${((Date.now() - started) / 1000).toFixed(0)} s in all`)
if (broken.length > 0) {
  log(`FAILED: errors, non-2xx answers or no answers from ${broken.map(m => m.id).join(', ')}`)
  process.exitCode = 1
}
