/*
 * The windows a limit counts in. A rate refills continuously over a duration (`30s`, `10m`,
 * `1h`, `1d`); a quota and a budget count in fixed windows: a calendar one in UTC (`minute`,
 * `hour`, `day`, `week` from Monday, `month`) or a duration, aligned to the epoch. Fixed
 * windows are what people budget in ("5,000.00 a day"), and their state ends with the window.
 */

const CALENDAR_WINDOWS = ['minute', 'hour', 'day', 'week', 'month'] as const
type CalendarWindow = typeof CALENDAR_WINDOWS[number]

const DURATION = /^([1-9]\d{0,8})(ms|s|m|h|d)$/
const UNIT_MS = { ms: 1, s: 1_000, m: 60_000, h: 3_600_000, d: 86_400_000 } as const
/** The longest window: a year (state older than that is not worth keeping). */
const MAX_WINDOW_MS = 366 * 86_400_000
const MIN_WINDOW_MS = 1_000

/** The milliseconds of a duration such as `90s` or `1h`; undefined when it is not one (or out of 1 s .. 366 d). */
export function durationMs (text: string): number | undefined {
  const match = DURATION.exec(text)
  if (match === null) return undefined
  const ms = Number(match[1]) * UNIT_MS[match[2] as keyof typeof UNIT_MS]
  return ms >= MIN_WINDOW_MS && ms <= MAX_WINDOW_MS ? ms : undefined
}

/** Where a fixed window starts and ends (epoch ms), for the instant `now`. */
interface WindowBounds {
  readonly start: number
  readonly end: number
}

/** A fixed window, from its text: a calendar name or a duration. */
export interface FixedWindow {
  readonly text: string
  bounds (now: number): WindowBounds
}

/** The fixed window `text` names, or undefined when it names none. */
export function fixedWindowOf (text: string): FixedWindow | undefined {
  if ((CALENDAR_WINDOWS as readonly string[]).includes(text)) {
    const name = text as CalendarWindow
    return { text, bounds: lastOf(now => calendarBounds(name, now)) }
  }
  const ms = durationMs(text)
  if (ms === undefined) return undefined
  return {
    text,
    bounds: now => {
      const start = Math.floor(now / ms) * ms
      return { start, end: start + ms }
    },
  }
}

/** The window of the last instant asked, kept: calls come many to a window, and dates cost. */
function lastOf (bounds: (now: number) => WindowBounds): (now: number) => WindowBounds {
  let last: WindowBounds = { start: 0, end: 0 }
  return now => {
    if (now < last.start || now >= last.end) last = bounds(now)
    return last
  }
}

function calendarBounds (name: CalendarWindow, now: number): WindowBounds {
  const d = new Date(now)
  const y = d.getUTCFullYear()
  const m = d.getUTCMonth()
  switch (name) {
    case 'minute': {
      const start = Math.floor(now / 60_000) * 60_000
      return { start, end: start + 60_000 }
    }
    case 'hour': {
      const start = Math.floor(now / 3_600_000) * 3_600_000
      return { start, end: start + 3_600_000 }
    }
    case 'day': {
      const start = Date.UTC(y, m, d.getUTCDate())
      return { start, end: start + 86_400_000 }
    }
    case 'week': {
      // ISO weeks start on Monday: getUTCDay() is 0 on Sunday.
      const back = (d.getUTCDay() + 6) % 7
      const start = Date.UTC(y, m, d.getUTCDate() - back)
      return { start, end: start + 7 * 86_400_000 }
    }
    case 'month':
      return { start: Date.UTC(y, m, 1), end: Date.UTC(y, m + 1, 1) }
  }
}
