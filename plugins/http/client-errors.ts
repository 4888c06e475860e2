import type { Socket } from 'node:net'
import type { FastifyInstance } from 'fastify'
import { newId } from '../../src/core/ids.js'
import { GatewayError, type ErrorCode } from '../../src/index.js'
import { PROBLEM_TYPE, problemOf } from './problem.js'

/** What Node reports on the socket, mapped into the catalogue. */
const SOCKET_CODES: Record<string, ErrorCode> = {
  ERR_HTTP_REQUEST_TIMEOUT: 'TOOLGATE_REQUEST_TIMEOUT',
  HPE_HEADER_OVERFLOW: 'TOOLGATE_HEADERS_TOO_LARGE',
}

/**
 * Fastify's `clientErrorHandler`: what Node refuses before (or while) a request reaches a route
 * (headers or body too slow, headers too large, unparsable HTTP) leaves as problem+json like
 * every other error, then the connection closes. A stalled body is timed out here, by Node's
 * `requestTimeout`, without holding up anyone else's requests.
 */
export function clientErrorHandler (this: FastifyInstance, error: Error & { code?: string }, socket: Socket): void {
  if (error.code === 'ECONNRESET' || socket.destroyed) return
  const code = SOCKET_CODES[error.code ?? ''] ?? 'TOOLGATE_MALFORMED_REQUEST'
  const requestId = newId()
  const problem = problemOf(new GatewayError(code, code === 'TOOLGATE_MALFORMED_REQUEST' ? 'the request is not valid HTTP' : undefined), requestId)
  this.log.debug({ err: error, requestId }, `client error: ${code}`)
  if (socket.writable) {
    const body = JSON.stringify(problem)
    socket.write(`HTTP/1.1 ${problem.status} ${problem.title}\r\nContent-Type: ${PROBLEM_TYPE}\r\nContent-Length: ${Buffer.byteLength(body)}\r\nX-Request-Id: ${requestId}\r\nConnection: close\r\n\r\n${body}`)
  }
  socket.destroy(error)
}
