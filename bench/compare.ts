/**
 * A quick side-by-side of some targets, for iterating on the hot path: the same interleaved
 * rounds as `npm run bench`, no scaling, no results file. The first target is the reference.
 *
 *   npx tsx bench/compare.ts fastify-zod toolgate [--rounds 3] [--seconds 5] [--warmup 3]
 *   npx tsx bench/compare.ts toolgate-echo toolgate-redis toolgate-exclusive toolgate-redis-exclusive
 *   npx tsx bench/compare.ts write write-audited      (the feature targets of bench/lib/features.ts)
 *
 * A target may also be a server file (`./bench/targets/mine.ts`), to try a variant side by side:
 * it is sent the request of the target named before it, and checked as that one is (first, the
 * toolgate target's): `npx tsx bench/compare.ts untraced-mcp OLD/bench/targets/toolgate-untraced.ts untraced-mcp`.
 *
 * Besides req/s it prints the server's CPU time per request, which moves less with what the
 * load generator and the machine happen to do than req/s does.
 */
import type { LoadResult } from './lib/load.js'
import { measureGroup } from './lib/measure.js'
import { median } from './lib/stats.js'
import { planFrom } from './lib/plan.js'
import { FEATURE_TARGETS, redisTargets, TARGETS, toolgateTarget, type Target } from './lib/targets.js'

const args = process.argv.slice(2)
const option = (name: string, fallback: number): number => {
  const index = args.indexOf(`--${name}`)
  return index === -1 ? fallback : Number(args[index + 1])
}
const ids = args.filter((arg, index) => !arg.startsWith('--') && !args[index - 1]?.startsWith('--'))
const known = new Map<string, Target>([...TARGETS, ...FEATURE_TARGETS, toolgateTarget(100), toolgateTarget(1000), ...redisTargets()].map(t => [t.id, t]))
// A server file is sent the request of the target named before it (the toolgate target's when first).
const targets: Target[] = []
for (const id of ids) {
  const template = targets.at(-1) ?? toolgateTarget(1)
  targets.push(known.get(id) ?? (id.endsWith('.ts') ? { ...template, id, label: id, file: id } : fail(`unknown target "${id}"; known: ${[...known.keys()].join(', ')}, or a server file`)))
}
if (targets.length === 0) fail('name at least one target')

const plan = { ...planFrom([]), warmupSec: option('warmup', 3), rounds: option('rounds', 3), durationSec: option('seconds', 5), patienceSec: option('patience', 30) }
const results = await measureGroup(targets, plan, line => { process.stderr.write(`${line}\n`) })
const reference = results[0]!
for (const m of results) {
  const cpuUs = m.cpu.server / m.requestsPerSec * 1e6
  const refCpuUs = reference.cpu.server / reference.requestsPerSec * 1e6
  process.stdout.write(`${m.id.padEnd(22)} ${Math.round(m.requestsPerSec).toString().padStart(7)} req/s  ${(m.requestsPerSec / reference.requestsPerSec).toFixed(2)}x  ` +
    `p99 ${m.p99Ms.toFixed(2)} ms  server CPU ${cpuUs.toFixed(1)} us/req (${(cpuUs / refCpuUs).toFixed(2)}x)  spread ${(m.spread * 100).toFixed(0)}%` +
    (m === reference ? '\n' : `  per round: ${paired(m.runs, reference.runs, run => run.requestsPerSec)} req/s, ${paired(m.runs, reference.runs, run => run.cpu.server / run.requestsPerSec)} CPU/req\n`))
}

/**
 * The ratio to the reference round by round, each target's run against the reference's run of
 * the same round (minutes apart at most, where the medians above may be of different minutes of
 * a machine whose speed drifts): median (min-max).
 */
function paired (runs: readonly LoadResult[], references: readonly LoadResult[], value: (run: LoadResult) => number): string {
  const ratios = runs.map((run, i) => value(run) / value(references[i]!)).sort((a, b) => a - b)
  return `${median(ratios).toFixed(2)}x (${ratios[0]!.toFixed(2)}-${ratios.at(-1)!.toFixed(2)})`
}

function fail (message: string): never {
  process.stderr.write(`${message}\n`)
  process.exit(2)
}
