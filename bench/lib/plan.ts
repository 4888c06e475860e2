/** How long and how hard to run: the full benchmark, or the smoke CI runs so it cannot rot. */
export interface Plan {
  readonly smoke: boolean
  readonly connections: number
  readonly warmupSec: number
  readonly rounds: number
  readonly durationSec: number
  /** How long a run waits for the machine to go quiet before measuring anyway. */
  readonly patienceSec: number
  /** Tool counts whose req/s is compared; the first is the reference. */
  readonly toolCounts: readonly number[]
  /** The leak check: RSS after the first count of calls, and after the second (in total). */
  readonly leakCalls: readonly [number, number]
  readonly resultsFile: string
}

const FULL: Plan = {
  smoke: false,
  connections: 50,
  warmupSec: 3,
  rounds: 5,
  durationSec: 10,
  patienceSec: 30,
  toolCounts: [1, 100, 1000],
  leakCalls: [10_000, 1_000_000],
  resultsFile: 'bench/results/latest.json',
}

const SMOKE: Plan = {
  ...FULL,
  smoke: true,
  warmupSec: 0,
  rounds: 1,
  durationSec: 1,
  leakCalls: [1_000, 5_000],
  resultsFile: 'bench/results/smoke.tmp.json',
}

/**
 * `--smoke`, or the full plan; `--rounds N`, `--seconds N` and `--patience N` (seconds a run
 * waits for a quiet machine) shorten or lengthen either, for a quicker features run on a machine
 * others share (`npm run bench:features -- --rounds 3 --seconds 5`).
 */
export function planFrom (argv: readonly string[]): Plan {
  const plan = argv.includes('--smoke') ? SMOKE : FULL
  return {
    ...plan,
    rounds: count(argv, '--rounds') ?? plan.rounds,
    durationSec: count(argv, '--seconds') ?? plan.durationSec,
    patienceSec: count(argv, '--patience') ?? plan.patienceSec,
  }
}

function count (argv: readonly string[], name: string): number | undefined {
  const at = argv.indexOf(name)
  if (at === -1) return undefined
  const value = Number(argv[at + 1])
  if (!Number.isInteger(value) || value < 1) throw new Error(`${name} takes a whole number of at least 1, not "${argv[at + 1]}"`)
  return value
}
