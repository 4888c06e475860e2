import { z } from 'zod'
import { defineTool, type Tool } from 'toolgate'

/** True when `Intl` knows `timeZone` (an IANA name such as `Europe/Paris`, or `UTC`). */
export function isTimeZone (timeZone: string): boolean {
  try {
    new Intl.DateTimeFormat('en-US', { timeZone })
    return true
  } catch {
    return false
  }
}

const inputSchema = z.object({
  timeZone: z.string().min(1).max(64)
    .refine(isTimeZone, { message: 'not a time zone known to this server; use an IANA name such as "Europe/Paris" or "UTC"' })
    .default('UTC')
    .describe('IANA time zone name, e.g. "America/New_York", "Asia/Kolkata" or "UTC" (the default).'),
}).strict()

const outputSchema = z.object({
  timeZone: z.string().describe('The time zone asked for.'),
  iso: z.iso.datetime().describe('The instant in UTC, ISO 8601 (e.g. "2025-03-01T12:00:00.000Z").'),
  local: z.string().regex(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}$/).describe('Wall-clock time in the zone, "YYYY-MM-DDTHH:mm:ss".'),
  offset: z.string().regex(/^[+-]\d{2}:\d{2}$/).describe('UTC offset of the zone at this instant, e.g. "+05:30".'),
  weekday: z.string().describe('Day of the week in the zone, in English.'),
  epochMs: z.number().int().describe('Milliseconds since the Unix epoch.'),
})

export interface TimeNowOptions {
  /** The clock; tests pass a fixed one. */
  readonly now?: () => Date
}

/** `time_now`: the current time in a time zone. Read-only and concurrency-safe: it only reads the clock. */
export function createTimeNowTool (options: TimeNowOptions = {}): Tool<typeof inputSchema, typeof outputSchema> {
  const now = options.now ?? (() => new Date())
  return defineTool({
    id: 'time_now',
    kind: 'read',
    description: 'Get the current date and time in an IANA time zone (default UTC). Call it whenever the answer depends on today\'s date or the time somewhere.',
    shortDescription: 'Current time in a time zone (timeZone: IANA name, default UTC).',
    inputSchema,
    outputSchema,
    isReadOnly: true,
    isConcurrencySafe: true,
    timeoutMs: 1_000,
    authorize () {},
    execute ({ timeZone }) {
      const date = now()
      return { timeZone, iso: date.toISOString(), ...wallClock(date, timeZone), epochMs: date.getTime() }
    },
  })
}

function wallClock (date: Date, timeZone: string): { local: string, offset: string, weekday: string } {
  const parts = new Intl.DateTimeFormat('en-US', {
    timeZone, hourCycle: 'h23', weekday: 'long', timeZoneName: 'longOffset',
    year: 'numeric', month: '2-digit', day: '2-digit', hour: '2-digit', minute: '2-digit', second: '2-digit',
  }).formatToParts(date)
  const part = (type: Intl.DateTimeFormatPartTypes): string => parts.find(p => p.type === type)?.value ?? ''
  const local = `${part('year')}-${part('month')}-${part('day')}T${part('hour')}:${part('minute')}:${part('second')}`
  // `longOffset` reads "GMT+05:30", or plain "GMT" at offset zero.
  const gmt = part('timeZoneName').replace(/^GMT/, '')
  return { local, offset: gmt === '' ? '+00:00' : gmt, weekday: part('weekday') }
}

export default createTimeNowTool()
