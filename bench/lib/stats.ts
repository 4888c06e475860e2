/** Nearest-rank percentile of an ascending list (NaN when empty). */
export function percentile (sorted: readonly number[], q: number): number {
  if (sorted.length === 0) return NaN
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil(q * sorted.length) - 1))]!
}

/** The middle value, or the mean of the two middle ones (NaN when empty). */
export function median (values: readonly number[]): number {
  const sorted = [...values].sort((a, b) => a - b)
  const middle = sorted.length / 2
  return Number.isInteger(middle) ? (sorted[middle - 1]! + sorted[middle]!) / 2 : sorted[Math.floor(middle)] ?? NaN
}

/** (max - min) / median: how far the measured runs disagree. */
export function spread (values: readonly number[]): number {
  return (Math.max(...values) - Math.min(...values)) / median(values)
}

/** "median unit (median of n; range min-max)", as the in-process benches print a set of rounds. */
export function medianAndRange (values: readonly number[], unit: string): string {
  const sorted = [...values].sort((a, b) => a - b)
  return `${sorted[Math.floor(sorted.length / 2)]!.toFixed(2)}${unit} (median of ${sorted.length}; range ${sorted[0]!.toFixed(2)}-${sorted.at(-1)!.toFixed(2)})`
}
