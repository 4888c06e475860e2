import { lookup as dnsLookup } from 'node:dns/promises'
import { isIP } from 'node:net'
import { z } from 'zod'
import { defineTool, ToolError, type Tool } from 'toolgate'
import { forbiddenAddressReason, isLoopbackAddress } from './fetch/address.js'
import { DEFAULT_MAX_BYTES, fetchSettingsFromEnv, isHostAllowed, parseAllowedHost, type AllowedHost } from './fetch/config.js'
import { pinnedGet, type PinnedGetResponse } from './fetch/pinned-get.js'

export interface ResolvedAddress { readonly address: string, readonly family: number }

export interface UrlFetchOptions {
  /** Hosts that may be fetched: `host`, `host:port` or `*.domain`. Empty allows nothing. */
  readonly allowedHosts?: ReadonlyArray<string | AllowedHost>
  readonly maxBytes?: number
  readonly timeoutMs?: number
  /** Every address of a host name; default `dns.lookup` with `all: true`. */
  readonly lookup?: (hostname: string) => Promise<readonly ResolvedAddress[]>
  /** Let 127.0.0.0/8 and ::1 through the address guard: for tests against a local server only. */
  readonly allowLoopback?: boolean
}

const inputSchema = z.object({
  url: z.url({ protocol: /^https?$/, error: 'an absolute http:// or https:// URL' }).max(2_048)
    // zod runs refinements even after the URL check failed: never assume `u` parses.
    .refine(u => !URL.canParse(u) || (new URL(u).username === '' && new URL(u).password === ''), 'URLs with credentials are not accepted')
    .describe('The http(s) URL to GET. Its host must be on the gateway\'s allowlist (FETCH_ALLOWED_HOSTS).'),
}).strict()

const outputSchema = z.object({
  url: z.string().describe('The URL fetched.'),
  status: z.number().int().describe('HTTP status. Redirects are not followed: a 3xx comes back with its `location` header.'),
  headers: z.record(z.string(), z.string()).describe('Selected response headers: content-type, content-length, location, last-modified, etag, cache-control.'),
  encoding: z.enum(['utf8', 'base64']).describe('How `body` is encoded: text as UTF-8, anything else as base64.'),
  body: z.string().describe('The response body, at most the size cap.'),
  bytes: z.number().int().min(0).describe('Body bytes read.'),
  truncated: z.boolean().describe('True when the body was cut at the size cap.'),
  address: z.string().describe('The IP address connected to.'),
})
type Output = z.output<typeof outputSchema>

/** What url_fetch fails with on purpose (`errors`). */
const FETCH_ERRORS = [
  { status: 403, code: 'HOST_NOT_ALLOWED', description: 'The URL\'s host is not on the gateway\'s fetch allowlist (FETCH_ALLOWED_HOSTS); nothing was fetched.' },
  { status: 403, code: 'ADDRESS_FORBIDDEN', description: 'The host resolves to a private, loopback, link-local or otherwise special address; url_fetch connects to public addresses only.' },
  { status: 502, code: 'HOST_UNRESOLVED', description: 'The host name did not resolve (or has no addresses).' },
  { status: 502, code: 'FETCH_FAILED', description: 'The connection or the request to the host failed (refused, reset, TLS); read `detail`.' },
] as const

const KEPT_HEADERS = ['content-type', 'content-length', 'location', 'last-modified', 'etag', 'cache-control'] as const
const TEXTUAL = /^(text\/|application\/([\w.+-]+\+)?(json|xml|javascript|x-www-form-urlencoded)\b)/i

const systemLookup = async (hostname: string): Promise<ResolvedAddress[]> => dnsLookup(hostname, { all: true })

/**
 * `url_fetch`: GET a URL on an allowlist, with size and time caps, never connecting to a
 * private, loopback, link-local or otherwise special address (every DNS answer is checked, and
 * the connection goes to the checked address, so DNS rebinding cannot slip one in).
 */
export function createUrlFetchTool (options: UrlFetchOptions = {}): Tool<typeof inputSchema, typeof outputSchema> {
  const allowed = (options.allowedHosts ?? []).map(h => (typeof h === 'string' ? parseAllowedHost(h) : h))
  const maxBytes = options.maxBytes ?? DEFAULT_MAX_BYTES
  const lookup = options.lookup ?? systemLookup
  const reasonToRefuse = (ip: string): string | undefined => (options.allowLoopback === true && isLoopbackAddress(ip) ? undefined : forbiddenAddressReason(ip))

  return defineTool({
    id: 'url_fetch',
    kind: 'network',
    description: `Fetch a web page or file with an HTTP GET, from hosts the gateway allows (others fail with HOST_NOT_ALLOWED, 403). Private and local addresses are always refused (ADDRESS_FORBIDDEN, 403). Bodies over ${maxBytes} bytes are cut off; redirects are returned, not followed.`,
    shortDescription: 'HTTP GET an allowlisted URL (url).',
    inputSchema,
    outputSchema,
    effects: ['external'],
    errors: FETCH_ERRORS,
    // A GET changes nothing here (and is safe by HTTP semantics): read-only, so plan mode may
    // use it. Not concurrency-safe, with selfConcurrency 4: a session runs at most 4 fetches at
    // once, bounding the load on allowlisted hosts and the memory held (4 x maxBytes), where
    // read-only + safe would let a session fan out without limit.
    isReadOnly: true,
    isConcurrencySafe: false,
    selfConcurrency: 4,
    timeoutMs: options.timeoutMs ?? 15_000,
    touchedResourcesOf: input => {
      const url = (input as { url?: unknown } | null)?.url
      return typeof url === 'string' ? [url] : []
    },
    authorize ({ url }) {
      if (allowed.length === 0) throw new ToolError(403, 'HOST_NOT_ALLOWED', 'url_fetch allows no hosts: the operator has not set FETCH_ALLOWED_HOSTS')
      if (!isHostAllowed(new URL(url), allowed)) throw new ToolError(403, 'HOST_NOT_ALLOWED', `${new URL(url).host} is not on this gateway's fetch allowlist`)
    },
    async execute (input, ctx) {
      const url = new URL(input.url)
      const target = await vettedAddress(url, lookup, reasonToRefuse)
      let response: PinnedGetResponse
      try {
        response = await pinnedGet({ url, ...target, maxBytes, signal: ctx.signal, userAgent: 'toolgate-url-fetch', trace: ctx.trace })
      } catch (error) {
        if (ctx.signal.aborted) throw ctx.signal.reason
        const code = (error as NodeJS.ErrnoException).code
        throw new ToolError(502, 'FETCH_FAILED', `fetching ${url.origin} failed: ${code ?? (error as Error).message}`)
      }
      return toOutput(url, target.address, response)
    },
    debugSteps (result, debug) {
      debug.step('connect', { address: result.address })
      debug.step('response', { status: result.status, bytes: result.bytes, truncated: result.truncated })
    },
  })
}

/** Resolve every address of the host and refuse them all if any one is forbidden. */
async function vettedAddress (
  url: URL, lookup: (hostname: string) => Promise<readonly ResolvedAddress[]>, reasonToRefuse: (ip: string) => string | undefined,
): Promise<{ address: string, family: 4 | 6 }> {
  const hostname = url.hostname.replace(/^\[(.*)\]$/, '$1')
  let addresses: readonly ResolvedAddress[]
  if (isIP(hostname) !== 0) {
    addresses = [{ address: hostname, family: isIP(hostname) }]
  } else {
    try {
      addresses = await lookup(hostname)
    } catch (error) {
      throw new ToolError(502, 'HOST_UNRESOLVED', `${hostname} did not resolve: ${(error as NodeJS.ErrnoException).code ?? 'lookup failed'}`)
    }
  }
  if (addresses.length === 0) throw new ToolError(502, 'HOST_UNRESOLVED', `${hostname} has no addresses`)
  for (const { address } of addresses) {
    const reason = reasonToRefuse(address)
    if (reason !== undefined) {
      throw new ToolError(403, 'ADDRESS_FORBIDDEN', `${hostname} resolves to ${address}, a ${reason} address; url_fetch connects to public addresses only`)
    }
  }
  const first = addresses[0]!
  return { address: first.address, family: isIP(first.address) === 6 ? 6 : 4 }
}

function toOutput (url: URL, address: string, response: PinnedGetResponse): Output {
  const headers: Record<string, string> = {}
  for (const name of KEPT_HEADERS) {
    const value = response.headers[name]
    if (value !== undefined) headers[name] = Array.isArray(value) ? value.join(', ') : value
  }
  const text = decodeText(response.body, headers['content-type'])
  return {
    url: url.href, status: response.status, headers,
    encoding: text === undefined ? 'base64' : 'utf8',
    body: text ?? response.body.toString('base64'),
    bytes: response.body.length, truncated: response.truncated, address,
  }
}

/** The body as text when its type is textual (or, untyped, when it is valid UTF-8). */
function decodeText (body: Buffer, contentType: string | undefined): string | undefined {
  if (contentType !== undefined) return TEXTUAL.test(contentType) ? new TextDecoder('utf-8').decode(body) : undefined
  try {
    return new TextDecoder('utf-8', { fatal: true }).decode(body)
  } catch {
    return undefined
  }
}

export default createUrlFetchTool(fetchSettingsFromEnv())
