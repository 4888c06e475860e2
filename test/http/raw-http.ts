import { request as httpRequest, type IncomingHttpHeaders } from 'node:http'
import { connect } from 'node:net'
import type { FastifyInstance } from 'fastify'

/** Listen on a free loopback port; the app is closed by whoever built it. */
export async function listening (app: FastifyInstance): Promise<number> {
  await app.listen({ host: '127.0.0.1', port: 0 })
  return (app.server.address() as { port: number }).port
}

export interface RawResponse { status: number, headers: string, body: string }

/**
 * Send `request` byte for byte and read until the server closes or `waitMs` passes: for what
 * an HTTP client library would normalise away (repeated headers, stalled bodies).
 */
export async function rawRequest (port: number, request: string, waitMs = 2_000): Promise<RawResponse> {
  const socket = connect(port, '127.0.0.1')
  let received = ''
  socket.setEncoding('latin1')
  socket.on('data', (chunk: Buffer) => { received += chunk.toString() })
  socket.write(request)
  await new Promise<void>(resolve => {
    const timer = setTimeout(() => { socket.destroy(); resolve() }, waitMs)
    socket.on('close', () => { clearTimeout(timer); resolve() })
    socket.on('error', () => { clearTimeout(timer); resolve() })
    // One response is enough: stop once the declared body is complete.
    socket.on('data', () => {
      const split = received.indexOf('\r\n\r\n')
      const length = /content-length: *(\d+)/i.exec(received.slice(0, split))
      if (split !== -1 && length !== null && received.length - split - 4 >= Number(length[1])) { clearTimeout(timer); socket.destroy(); resolve() }
    })
  })
  const split = received.indexOf('\r\n\r\n')
  return { status: Number(received.slice(9, 12)), headers: received.slice(0, split), body: received.slice(split + 4) }
}

export interface Answer { status: number, headers: IncomingHttpHeaders, body: string }

/** One HTTP request from the loopback source address `from` (127.0.0.2, ...), on a connection of its own. */
export function send (port: number, from: string, headers: Record<string, string>, path = '/tools', method = 'GET', payload?: string): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const req = httpRequest({ host: '127.0.0.1', port, path, method, localAddress: from, headers: { connection: 'close', ...headers } }, res => {
      let body = ''
      res.setEncoding('utf8')
      res.on('data', chunk => { body += chunk })
      res.on('end', () => { resolve({ status: res.statusCode!, headers: res.headers, body }) })
    })
    req.on('error', reject)
    req.end(payload)
  })
}
