import { z } from 'zod'

export const DEFAULT_MAX_BYTES = 1024 * 1024
const MAX_MAX_BYTES = 64 * 1024 * 1024

/** One allowlist entry: a host (any port), `host:port`, or `*.domain` (its subdomains, any port). */
export interface AllowedHost {
  readonly hostname: string
  readonly port?: string
  readonly subdomains: boolean
}

/** Parse one allowlist entry; throws with a message naming the bad entry. */
export function parseAllowedHost (entry: string): AllowedHost {
  const text = entry.trim().toLowerCase()
  const subdomains = text.startsWith('*.')
  let url: URL
  try {
    url = new URL(`http://${subdomains ? text.slice(2) : text}`)
  } catch {
    throw new Error(`"${entry}" is not a host, host:port or *.domain`)
  }
  if (url.username !== '' || url.password !== '' || url.pathname !== '/' || url.search !== '' || url.hash !== '') {
    throw new Error(`"${entry}" is not a host, host:port or *.domain`)
  }
  return { hostname: trimDot(url.hostname), ...(url.port === '' ? {} : { port: url.port }), subdomains }
}

/** Does `url` name an allowed host (and port, when the entry pins one)? */
export function isHostAllowed (url: URL, allowed: readonly AllowedHost[]): boolean {
  const hostname = trimDot(url.hostname.toLowerCase())
  const port = url.port === '' ? (url.protocol === 'https:' ? '443' : '80') : url.port
  return allowed.some(entry => {
    const hostMatches = entry.subdomains ? hostname.endsWith(`.${entry.hostname}`) : hostname === entry.hostname
    return hostMatches && (entry.port === undefined || entry.port === port)
  })
}

function trimDot (hostname: string): string {
  return hostname.endsWith('.') ? hostname.slice(0, -1) : hostname
}

const EnvSchema = z.object({
  FETCH_ALLOWED_HOSTS: z.string().default('').transform((value, ctx) => {
    const hosts: AllowedHost[] = []
    for (const entry of value.split(',').map(s => s.trim()).filter(s => s !== '')) {
      try {
        hosts.push(parseAllowedHost(entry))
      } catch (error) {
        ctx.addIssue({ code: 'custom', message: (error as Error).message })
      }
    }
    return hosts
  }),
  FETCH_MAX_BYTES: z.coerce.number().int().positive().max(MAX_MAX_BYTES).default(DEFAULT_MAX_BYTES),
})

export interface FetchSettings {
  readonly allowedHosts: readonly AllowedHost[]
  readonly maxBytes: number
}

/**
 * `FETCH_ALLOWED_HOSTS` (comma-separated; empty, the default, allows nothing) and
 * `FETCH_MAX_BYTES` (default 1 MiB). A bad value stops start-up with a message naming it.
 */
export function fetchSettingsFromEnv (env: NodeJS.ProcessEnv = process.env): FetchSettings {
  const parsed = EnvSchema.safeParse({
    FETCH_ALLOWED_HOSTS: env.FETCH_ALLOWED_HOSTS,
    FETCH_MAX_BYTES: env.FETCH_MAX_BYTES === '' ? undefined : env.FETCH_MAX_BYTES,
  })
  if (!parsed.success) {
    const issue = parsed.error.issues[0]!
    throw new Error(`invalid setting "${issue.path.join('.')}": ${issue.message}`)
  }
  return { allowedHosts: parsed.data.FETCH_ALLOWED_HOSTS, maxBytes: parsed.data.FETCH_MAX_BYTES }
}
