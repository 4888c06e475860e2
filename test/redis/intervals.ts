/** One call's answer from the replica-tools fixture, with the tool that gave it. */
export interface Ran {
  readonly tool: string
  readonly start: number
  readonly end: number
  readonly token: number | null
}

const overlaps = (a: Ran, b: Ran): boolean => a.start < b.end && b.start < a.end

/**
 * Pairs of calls of one session that overlapped although the concurrency rules forbid it
 * (docs/declaration.md#concurrency):
 * anything beside `slot_exclusive`, anything but `slot_pair` beside `slot_pair`, and more than
 * `pairLimit` `slot_pair` calls at once.
 */
export function violations (calls: readonly Ran[], pairLimit = 2): string[] {
  const found: string[] = []
  for (const [i, a] of calls.entries()) {
    const beside = calls.filter((b, j) => j !== i && overlaps(a, b))
    if (a.tool === 'slot_exclusive' && beside.length > 0) found.push(`slot_exclusive overlapped ${beside.map(b => b.tool).join(', ')}`)
    if (a.tool === 'slot_pair') {
      if (beside.some(b => b.tool !== 'slot_pair')) found.push('slot_pair overlapped another tool')
      // Most at once: count, at each start inside this call, the pair calls then running.
      const peak = Math.max(...[a, ...beside].filter(b => b.tool === 'slot_pair').map(p => calls.filter(b => b.tool === 'slot_pair' && b.start <= p.start && p.start < b.end).length))
      if (peak > pairLimit) found.push(`${peak} slot_pair calls at once`)
    }
  }
  return found
}
