import { PassThrough } from 'node:stream'
import type { FastifyReply } from 'fastify'

/**
 * The answer to one POST as a server-sent event stream, opened only when the call has
 * something to say before its result (a progress notification): a call that says nothing is
 * answered as before, one JSON body or one event. Sent through the reply (not around it), so
 * the response hooks, the access log and the metrics see it as any other response.
 */
export class EventStream {
  readonly #reply: FastifyReply
  #stream: PassThrough | undefined
  /** The client is not reading: notifications are dropped until it drains (each supersedes the last). */
  #full = false

  constructor (reply: FastifyReply) {
    this.#reply = reply
  }

  get open (): boolean {
    return this.#stream !== undefined
  }

  /** One notification; the first opens the stream (status 200: the result follows in it, whatever it is). */
  notify (json: string): void {
    if (this.#stream === undefined) {
      this.#stream = new PassThrough()
      // A client gone mid-stream destroys it: what is still written is dropped, never an unhandled error.
      this.#stream.on('error', () => {})
      void this.#reply.code(200).header('cache-control', 'no-cache').type('text/event-stream').send(this.#stream)
    }
    if (this.#full || this.#stream.writableEnded || this.#stream.destroyed) return
    if (!this.#stream.write(eventOf(json))) {
      this.#full = true
      this.#stream.once('drain', () => { this.#full = false })
    }
  }

  /** The result, last, and the stream ends; resolves when the response is finished. */
  async end (json: string): Promise<void> {
    if (!this.#stream!.destroyed) this.#stream!.end(eventOf(json))
    await this.#reply
  }
}

export function eventOf (json: string): string {
  return `event: message\ndata: ${json}\n\n`
}
