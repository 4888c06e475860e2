/** How long and how hard to run: the full benchmark, or the smoke CI runs so it cannot rot. */
export interface Plan {
  readonly smoke: boolean
  readonly connections: number
  readonly warmupSec: number
  readonly rounds: number
  readonly durationSec: number
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

export function planFrom (argv: readonly string[]): Plan {
  return argv.includes('--smoke') ? SMOKE : FULL
}
