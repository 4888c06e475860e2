/**
 * The console page's own timings, read off its source (plugins/console/page/console.js), so that
 * the viewer of bench/console.ts keeps the page's pace when the page changes: how often it polls
 * (POLL_MS: the charts, upstreams and approvals; twice that the audit tail, three times the
 * catalog), how long its long poll waits (CALL_WAIT_MS), and how long it pauses after an answer
 * that brought calls (CALLS_PACE_MS, 0 in a page that has none).
 */
import { readFileSync } from 'node:fs'

export interface PagePace {
  readonly pollMs: number
  readonly callWaitMs: number
  readonly callsPaceMs: number
}

export function pagePace (): PagePace {
  const page = readFileSync(new URL('../../plugins/console/page/console.js', import.meta.url), 'utf8')
  const constant = (name: string, fallback?: number): number => {
    const found = new RegExp(`\\bconst ${name} = (\\d[\\d_]*)\\b`).exec(page)
    if (found !== null) return Number(found[1]!.replaceAll('_', ''))
    if (fallback === undefined) throw new Error(`plugins/console/page/console.js declares no ${name}: the console viewer no longer knows the page's pace`)
    return fallback
  }
  return { pollMs: constant('POLL_MS'), callWaitMs: constant('CALL_WAIT_MS'), callsPaceMs: constant('CALLS_PACE_MS', 0) }
}

/** One answer a viewer got: when, of which read, its status (-1: failed), its bytes, the calls it brought. */
export interface Answered { readonly at: number, readonly read: string, readonly status: number, readonly bytes: number, readonly calls?: number }

export type ReadCounts = Record<string, { requests: number, ok: number, notModified: number, failed: number, bytes: number }>

/** The answers between `from` and `to` (epoch ms), counted by read; and the calls they brought. */
export function tally (answered: readonly Answered[], from: number, to: number): { readonly reads: ReadCounts, readonly callsSeen: number } {
  const reads: ReadCounts = {}
  let callsSeen = 0
  for (const one of answered) {
    if (one.at < from || one.at > to) continue
    const count = reads[one.read] ??= { requests: 0, ok: 0, notModified: 0, failed: 0, bytes: 0 }
    count.requests++
    count.bytes += one.bytes
    if (one.status === 200) count.ok++
    else if (one.status === 304) count.notModified++
    else count.failed++
    callsSeen += one.calls ?? 0
  }
  return { reads, callsSeen }
}
