import { Agent as HttpAgent, request as httpRequest, type IncomingMessage } from 'node:http'
import { Agent as HttpsAgent, request as httpsRequest } from 'node:https'
import type { BuiltRequest } from './request.js'

/*
 * One HTTP exchange with a service, over a keep-alive agent of its own: the request line as
 * built, redirects followed within the base URL's origin only (at most three), the answer
 * read up to a byte limit, the caller's signal aborting it. No cookies, no credentials but the
 * service's, no proxy from the environment. Failures come back as `HttpFailure` kinds for the
 * caller to map: whether the request may have reached the service decides what can be retried.
 */

export interface HttpAnswer {
  readonly status: number
  readonly headers: IncomingMessage['headers']
  readonly body: Buffer
}

export type HttpFailureKind =
  /** The connection could not be made: the request never left. */
  | 'unreachable'
  /** The connection failed after the request was sent, before a whole answer came. */
  | 'lost'
  /** The answer is larger than the limit. */
  | 'too_large'
  /** A redirect to another origin, or too many. */
  | 'redirect'

export class HttpFailure extends Error {
  readonly kind: HttpFailureKind

  constructor (kind: HttpFailureKind, message: string, options?: ErrorOptions) {
    super(message, options)
    this.name = 'HttpFailure'
    this.kind = kind
  }
}

const MAX_REDIRECTS = 3
/** Errors raised before a socket is connected: the request did not reach the service. */
const CONNECT_ERRORS = new Set(['ECONNREFUSED', 'ENOTFOUND', 'EAI_AGAIN', 'EHOSTUNREACH', 'ENETUNREACH', 'EADDRNOTAVAIL', 'ERR_TLS_CERT_ALTNAME_INVALID', 'CERT_HAS_EXPIRED', 'DEPTH_ZERO_SELF_SIGNED_CERT', 'UNABLE_TO_VERIFY_LEAF_SIGNATURE', 'SELF_SIGNED_CERT_IN_CHAIN'])

export class ServiceHttp {
  readonly #base: URL
  readonly #agent: HttpAgent
  readonly #maxBytes: number

  constructor (baseUrl: string, maxSockets: number, maxBytes: number) {
    this.#base = new URL(baseUrl)
    // An idle socket is dropped before a typical server's keep-alive timeout (5 s) would close it under a new request.
    const options = { keepAlive: true, maxSockets, maxFreeSockets: Math.min(maxSockets, 64), scheduling: 'lifo' as const, timeout: 4_000 }
    this.#agent = this.#base.protocol === 'https:' ? new HttpsAgent(options) : new HttpAgent(options)
    this.#maxBytes = maxBytes
  }

  /** The base URL's path, which every request's path starts with. */
  get basePath (): string {
    return this.#base.pathname
  }

  get origin (): string {
    return this.#base.origin
  }

  async send (built: BuiltRequest, headers: Readonly<Record<string, string>>, signal: AbortSignal): Promise<HttpAnswer> {
    let method = built.method
    let target = built.target
    let body = built.body
    for (let hop = 0; ; hop++) {
      const answer = await this.#once(method, target, headers, body, signal)
      if (![301, 302, 303, 307, 308].includes(answer.status) || typeof answer.headers.location !== 'string') return answer
      if (hop === MAX_REDIRECTS) throw new HttpFailure('redirect', `more than ${MAX_REDIRECTS} redirects`)
      const next = new URL(answer.headers.location, new URL(target, this.#base))
      if (next.origin !== this.#base.origin) throw new HttpFailure('redirect', `a redirect to another origin (${next.origin}), not followed`)
      target = next.pathname + next.search
      // As browsers do: 303 (and 301/302 after anything but GET or HEAD) fetches the answer with GET.
      if (answer.status === 303 || ((answer.status === 301 || answer.status === 302) && method !== 'GET' && method !== 'HEAD')) {
        method = method === 'HEAD' ? 'HEAD' : 'GET'
        body = undefined
      }
    }
  }

  async #once (method: string, target: string, headers: Readonly<Record<string, string>>, body: BuiltRequest['body'], signal: AbortSignal): Promise<HttpAnswer> {
    signal.throwIfAborted()
    const send = this.#base.protocol === 'https:' ? httpsRequest : httpRequest
    return await new Promise<HttpAnswer>((resolve, reject) => {
      let sent = false
      let settled = false
      const fail = (error: unknown): void => {
        if (settled) return
        settled = true
        reject(error)
      }
      const request = send({
        protocol: this.#base.protocol,
        hostname: this.#base.hostname,
        port: this.#base.port,
        method,
        path: target,
        agent: this.#agent,
        headers: {
          ...headers,
          ...(body === undefined ? {} : { 'content-type': body.contentType, 'content-length': String(body.bytes.length) }),
        },
        signal,
      }, response => {
        const declared = Number(response.headers['content-length'])
        if (Number.isFinite(declared) && declared > this.#maxBytes) {
          response.destroy()
          fail(new HttpFailure('too_large', `the answer declares ${declared} bytes; at most ${this.#maxBytes} are read`))
          return
        }
        const chunks: Buffer[] = []
        let size = 0
        response.on('data', (chunk: Buffer) => {
          size += chunk.length
          if (size > this.#maxBytes) {
            response.destroy()
            fail(new HttpFailure('too_large', `the answer is larger than ${this.#maxBytes} bytes`))
            return
          }
          chunks.push(chunk)
        })
        response.on('end', () => {
          if (settled) return
          settled = true
          resolve({ status: response.statusCode ?? 0, headers: response.headers, body: Buffer.concat(chunks) })
        })
        response.on('error', error => { fail(signal.aborted ? signal.reason : new HttpFailure('lost', 'the connection broke during the answer', { cause: error })) })
        response.on('aborted', () => { fail(signal.aborted ? signal.reason : new HttpFailure('lost', 'the connection broke during the answer')) })
      })
      request.on('socket', socket => {
        // A socket from the pool is connected already: from here the service may see the request.
        if (!socket.connecting) sent = true
        else socket.once('connect', () => { sent = true })
      })
      request.on('error', (error: NodeJS.ErrnoException) => {
        if (signal.aborted) {
          fail(signal.reason)
          return
        }
        const unreachable = !sent || CONNECT_ERRORS.has(error.code ?? '')
        fail(new HttpFailure(unreachable ? 'unreachable' : 'lost', unreachable ? `cannot connect (${error.code ?? error.message})` : `the connection broke (${error.code ?? error.message})`, { cause: error }))
      })
      request.end(body?.bytes)
    })
  }

  close (): void {
    this.#agent.destroy()
  }
}
