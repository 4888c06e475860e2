import { SSEClientTransport, StreamableHTTPClientTransport, type FetchLike, type Transport } from '@modelcontextprotocol/client'
import type { RemoteServerConfig } from '../file.js'

/*
 * A remote MCP server over Streamable HTTP (or the older HTTP+SSE transport). Its headers are
 * the file's (the server's own credentials), never the caller's. What it sends is bounded: a
 * JSON answer by `MAX_RESPONSE_BYTES`, an event stream by the same bound per event, so a server
 * cannot make the gateway buffer without end.
 */

export function remoteTransport (server: RemoteServerConfig, maxMessageBytes: number): Transport {
  const options = { requestInit: { headers: { ...server.headers } }, fetch: boundedFetch(maxMessageBytes) }
  const url = new URL(server.url)
  // Redirects only within the server's own origin: its credentials never go anywhere else.
  return server.transport === 'sse' ? new SSEClientTransport(url, options) : new StreamableHTTPClientTransport(url, { ...options, redirectPolicy: 'same-origin' })
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
