import type { IncomingMessage } from 'node:http'
import type { Socket } from 'node:net'
import type { FastifyInstance } from 'fastify'

/**
 * Connections that have not carried a request are closed when the app closes. Fastify closes
 * idle keep-alive connections then, but not one that never sent anything: `close()` waits for
 * it until the client hangs up or the headers timeout passes (an HTTP client's spare connection
 * is enough to stall a shutdown).
 */
export function closeUnusedConnections (app: FastifyInstance): void {
  const unused = new Set<Socket>()
  app.server.on('connection', (socket: Socket) => {
    unused.add(socket)
    socket.once('close', () => unused.delete(socket))
  })
  app.server.on('request', (request: IncomingMessage) => { unused.delete(request.socket) })
  app.addHook('preClose', (done) => {
    for (const socket of unused) socket.destroy()
    done()
  })
}
