import { once } from 'node:events'
import { createConnection, createServer, type Server, type Socket } from 'node:net'

/**
 * A TCP proxy in front of Redis that a test can cut: `block()` drops every open connection
 * and black-holes new ones (accepted, never answered), as a network partition between one
 * replica and Redis would; `unblock()` heals it.
 */
export class TcpProxy {
  readonly #sockets = new Set<Socket>()
  #blocked = false

  private constructor (readonly server: Server, readonly port: number) {}

  static async start (targetPort: number): Promise<TcpProxy> {
    let proxy: TcpProxy | undefined
    const server = createServer(client => { proxy!.#accept(client, targetPort) })
    server.listen(0, '127.0.0.1')
    await once(server, 'listening')
    proxy = new TcpProxy(server, (server.address() as { port: number }).port)
    return proxy
  }

  get url (): string {
    return `redis://127.0.0.1:${this.port}`
  }

  block (): void {
    this.#blocked = true
    for (const socket of this.#sockets) socket.destroy()
    this.#sockets.clear()
  }

  unblock (): void {
    this.#blocked = false
  }

  async close (): Promise<void> {
    this.block()
    await new Promise(resolve => { this.server.close(resolve) })
  }

  #accept (client: Socket, targetPort: number): void {
    this.#sockets.add(client)
    client.on('error', () => {})
    if (this.#blocked) return // accepted, never forwarded: silence, as behind a partition
    const upstream = createConnection(targetPort, '127.0.0.1')
    this.#sockets.add(upstream)
    upstream.on('error', () => { client.destroy() })
    client.on('close', () => { upstream.destroy() })
    upstream.on('close', () => { client.destroy() })
    client.pipe(upstream).pipe(client)
  }
}
