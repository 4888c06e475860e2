import { createServer, type IncomingHttpHeaders, type ServerResponse } from 'node:http'
import type { AddressInfo } from 'node:net'

export interface Received {
  readonly headers: IncomingHttpHeaders
  readonly body: string
}

export interface Receiver {
  readonly url: string
  readonly received: Received[]
  /** Resolves once `count` requests have arrived. */
  waitFor: (count: number, timeoutMs?: number) => Promise<Received[]>
  close: () => Promise<void>
}

/**
 * A webhook receiver on loopback that keeps every request; `answer` decides each response
 * (default 204). It may hold a response open to prove that the sender does not wait for it.
 */
export async function startReceiver (answer: (received: Received, response: ServerResponse) => void = (_r, response) => { response.writeHead(204).end() }): Promise<Receiver> {
  const received: Received[] = []
  const waiters: Array<() => void> = []
  const server = createServer((request, response) => {
    const chunks: Buffer[] = []
    request.on('data', (chunk: Buffer) => chunks.push(chunk))
    request.on('end', () => {
      const entry = { headers: request.headers, body: Buffer.concat(chunks).toString('utf8') }
      received.push(entry)
      for (const wake of waiters.splice(0)) wake()
      answer(entry, response)
    })
  })
  await new Promise<void>(resolve => server.listen(0, '127.0.0.1', resolve))
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/hook`
  return {
    url,
    received,
    waitFor: async (count, timeoutMs = 10_000) => {
      const deadline = Date.now() + timeoutMs
      while (received.length < count) {
        if (Date.now() > deadline) throw new Error(`expected ${count} webhook requests, got ${received.length}`)
        await new Promise<void>(resolve => { waiters.push(resolve); setTimeout(resolve, 100) })
      }
      return received.slice(0, count)
    },
    close: async () => {
      server.closeAllConnections()
      await new Promise(resolve => server.close(resolve))
    },
  }
}
