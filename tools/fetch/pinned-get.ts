import http from 'node:http'
import https from 'node:https'
import type { LookupFunction } from 'node:net'

export interface PinnedGetRequest {
  readonly url: URL
  /** The vetted address to connect to, whatever the host name resolves to by now. */
  readonly address: string
  readonly family: 4 | 6
  /** Read at most this many body bytes; the rest is never read. */
  readonly maxBytes: number
  readonly signal: AbortSignal
  readonly userAgent: string
  /** The call's W3C trace context (`ctx.trace`), sent on so the fetched service joins the trace. */
  readonly trace?: { readonly traceparent: string, readonly tracestate?: string }
}

export interface PinnedGetResponse {
  readonly status: number
  readonly headers: Readonly<Record<string, string | string[] | undefined>>
  readonly body: Buffer
  readonly truncated: boolean
}

/**
 * One HTTP(S) GET connected to a pre-vetted address. The host name still goes into the
 * `Host` header and TLS (SNI and certificate checks), but the socket connects to `address`:
 * a second DNS answer (rebinding) cannot redirect it. Redirects are not followed. The body
 * is streamed and the connection dropped once `maxBytes` are in.
 */
export function pinnedGet (request: PinnedGetRequest): Promise<PinnedGetResponse> {
  const { url, address, family, maxBytes, signal } = request
  const client = url.protocol === 'https:' ? https : http
  return new Promise((resolve, reject) => {
    let settled = false
    const fail = (error: Error): void => { if (!settled) { settled = true; reject(error) } }
    const req = client.request({
      protocol: url.protocol,
      hostname: url.hostname.replace(/^\[(.*)\]$/, '$1'),
      port: url.port === '' ? undefined : Number(url.port),
      path: `${url.pathname}${url.search}`,
      method: 'GET',
      headers: { host: url.host, 'user-agent': request.userAgent, accept: '*/*', 'accept-encoding': 'identity', ...request.trace },
      // A fresh socket per call: no pooled connection to an address vetted for another call.
      agent: false,
      lookup: pinnedLookup(address, family),
      signal,
    }, response => {
      const chunks: Buffer[] = []
      let size = 0
      let truncated = false
      const finish = (): void => {
        if (settled) return
        settled = true
        resolve({ status: response.statusCode ?? 0, headers: response.headers, body: Buffer.concat(chunks, size), truncated })
      }
      response.on('data', (chunk: Buffer) => {
        if (truncated) return
        const room = maxBytes - size
        if (chunk.length > room) {
          chunks.push(chunk.subarray(0, room))
          size += room
          truncated = true
          finish()
          response.destroy()
          return
        }
        chunks.push(chunk)
        size += chunk.length
      })
      response.on('end', finish)
      response.on('error', fail)
      response.on('close', () => { fail(new Error('the connection closed before the body ended')) })
    })
    req.on('error', fail)
    req.end()
  })
}

/** A `lookup` that answers every query with the vetted address, in both callback shapes. */
function pinnedLookup (address: string, family: 4 | 6): LookupFunction {
  return (_hostname, options, callback) => {
    if (options.all === true) (callback as (err: null, addresses: Array<{ address: string, family: number }>) => void)(null, [{ address, family }])
    else callback(null, address, family)
  }
}
