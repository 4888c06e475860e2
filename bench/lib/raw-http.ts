/**
 * The cheapest HTTP/1.1 keep-alive client this bench can have: one socket, one request at a
 * time, the request bytes built once, the answer read only as far as its status and
 * content-length. node:http costs the load process about 40 us per request, twice the whole
 * direct MCP call, and that CPU is taken from the gateway on a small machine. A connection the
 * server closed while it sat idle (between the rounds of other paths) is opened again on the
 * next call, as any keep-alive client does; one closed while a request is out fails that request.
 */
import { connect, type Socket } from 'node:net'

export class RawHttpClient {
  readonly #port: number
  readonly #request: Buffer
  #socket: Socket | undefined
  #pending: { resolve: (status: number) => void, reject: (error: Error) => void } | undefined
  #buffer: Buffer = Buffer.alloc(0)

  private constructor (port: number, request: Buffer) {
    this.#port = port
    this.#request = request
  }

  /** A client that sends `POST path` with `body` and `headers`, over one connection to `port`. */
  static async open (port: number, path: string, body: string, headers: Record<string, string>): Promise<RawHttpClient> {
    const head = [`POST ${path} HTTP/1.1`, 'host: 127.0.0.1', 'content-type: application/json', `content-length: ${Buffer.byteLength(body)}`, ...Object.entries(headers).map(([k, v]) => `${k}: ${v}`)]
    const client = new RawHttpClient(port, Buffer.from(`${head.join('\r\n')}\r\n\r\n${body}`))
    client.#socket = await client.#connect()
    return client
  }

  /** One request; its status once the whole answer arrived. */
  async call (): Promise<number> {
    this.#socket ??= await this.#connect()
    const socket = this.#socket
    return await new Promise((resolve, reject) => {
      this.#pending = { resolve, reject }
      socket.write(this.#request)
    })
  }

  close (): void {
    this.#socket?.destroy()
  }

  async #connect (): Promise<Socket> {
    const socket = connect(this.#port, '127.0.0.1')
    await new Promise<void>((resolve, reject) => { socket.once('connect', resolve).once('error', reject) })
    socket.setNoDelay(true)
    this.#buffer = Buffer.alloc(0)
    socket.on('data', chunk => { this.#read(chunk) })
    socket.on('error', error => { this.#fail(error) })
    socket.on('close', () => {
      if (this.#socket === socket) this.#socket = undefined
      this.#fail(new Error('the connection closed'))
    })
    return socket
  }

  #read (chunk: Buffer): void {
    this.#buffer = this.#buffer.length === 0 ? chunk : Buffer.concat([this.#buffer, chunk])
    const headEnd = this.#buffer.indexOf('\r\n\r\n')
    if (headEnd === -1) return
    const head = this.#buffer.toString('latin1', 0, headEnd)
    const length = /\r\ncontent-length: *(\d+)/i.exec(head)
    if (length === null) {
      this.#fail(new Error('an answer without content-length'))
      return
    }
    const total = headEnd + 4 + Number(length[1])
    if (this.#buffer.length < total) return
    this.#buffer = this.#buffer.subarray(total)
    const pending = this.#pending
    this.#pending = undefined
    pending?.resolve(Number(head.slice(9, 12)))
  }

  #fail (error: Error): void {
    const pending = this.#pending
    this.#pending = undefined
    pending?.reject(error)
  }
}
