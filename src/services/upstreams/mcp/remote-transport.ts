import { AsyncLocalStorage } from 'node:async_hooks'
import { SSEClientTransport, StreamableHTTPClientTransport, type FetchLike, type Transport } from '@modelcontextprotocol/client'
import type { Principal } from '../../../core/app-context.js'
import type { RemoteServerConfig } from '../file.js'
import type { UpstreamCredential } from '../credentials/credential.js'

/*
 * A remote MCP server over Streamable HTTP (or the older HTTP+SSE transport). Its headers are
 * the file's (the server's own credentials), never the caller's. What it sends is bounded: a
 * JSON answer by `MAX_RESPONSE_BYTES`, an event stream by the same bound per event, so a server
 * cannot make the gateway buffer without end.
 */

/** Whom a request is sent for, and how long its credential may take: set around a call, read where its requests go out. */
export interface Caller {
  readonly principal: Principal | undefined
  readonly waitMs: number
}

const callers = new AsyncLocalStorage<Caller>()

/**
 * Run `work` as the gateway itself, whatever call it was started from: a reconnection or a
 * refresh of the lists that a call's failure or a notification on its stream set off must not
 * carry that caller's credential (timers and callbacks keep the context they were made in).
 */
export function asGateway<T> (work: () => T): T {
  return callers.exit(work)
}

/** Run `send` so that every request it makes to a remote server carries `caller`'s credential. */
export async function asCaller<T> (caller: Caller, send: () => Promise<T>): Promise<T> {
  return await callers.run(caller, send)
}

export function remoteTransport (server: RemoteServerConfig, maxMessageBytes: number, credential?: UpstreamCredential, gatewayWaitMs = 10_000): Transport {
  const bounded = boundedFetch(maxMessageBytes)
  const options = { requestInit: { headers: { ...server.headers } }, fetch: credential === undefined ? bounded : withCredential(bounded, credential, gatewayWaitMs) }
  const url = new URL(server.url)
  // Redirects only within the server's own origin: its credentials never go anywhere else.
  return server.transport === 'sse' ? new SSEClientTransport(url, options) : new StreamableHTTPClientTransport(url, { ...options, redirectPolicy: 'same-origin' })
}

/**
 * Each request with the credential of the call it belongs to (or the gateway's own, for
 * connecting, listing and notifications): one session, each request as its caller. A 401 goes
 * back to the credential, which gives a new token once or refuses the call.
 */
function withCredential (fetch: FetchLike, credential: UpstreamCredential, gatewayWaitMs: number): FetchLike {
  return async (input, init) => {
    const caller = callers.getStore()
    let applied = await credential.apply(caller?.principal, caller?.waitMs ?? gatewayWaitMs)
    for (;;) {
      const headers = new Headers(init?.headers)
      for (const [name, value] of Object.entries(applied.headers)) headers.set(name, value)
      const response = await fetch(input, { ...init, headers })
      if (response.status !== 401) return response
      await response.body?.cancel()
      applied = await applied.refused()
    }
  }
}

class ResponseTooLargeError extends Error {
  constructor (limit: number) {
    super(`the server sent a message larger than ${limit} bytes`)
    this.name = 'ResponseTooLargeError'
  }
}

function boundedFetch (limit: number): FetchLike {
  return async (input, init) => {
    const response = await fetch(input, init)
    const length = Number(response.headers.get('content-length'))
    if (Number.isFinite(length) && length > limit) {
      await response.body?.cancel()
      throw new ResponseTooLargeError(limit)
    }
    if (response.body === null) return response
    const stream = (response.headers.get('content-type') ?? '').includes('text/event-stream')
    const bounded = response.body.pipeThrough(stream ? perEvent(limit) : total(limit))
    return new Response(bounded, { status: response.status, statusText: response.statusText, headers: response.headers })
  }
}

function total (limit: number): TransformStream<Uint8Array, Uint8Array> {
  let seen = 0
  return new TransformStream({
    transform (chunk, controller) {
      seen += chunk.byteLength
      if (seen > limit) controller.error(new ResponseTooLargeError(limit))
      else controller.enqueue(chunk)
    },
  })
}

/** An event stream never ends by design: bound each event (the bytes since the last blank line). */
function perEvent (limit: number): TransformStream<Uint8Array, Uint8Array> {
  let since = 0
  let lastWasNewline = false
  return new TransformStream({
    transform (chunk, controller) {
      for (const byte of chunk) {
        if (byte === 13) continue
        if (byte === 10 && lastWasNewline) since = 0
        else since++
        lastWasNewline = byte === 10
      }
      if (since > limit) controller.error(new ResponseTooLargeError(limit))
      else controller.enqueue(chunk)
    },
  })
}
