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
