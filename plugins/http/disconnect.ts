import type { ServerResponse } from 'node:http'
import type { FastifyReply } from 'fastify'
import type { CancelSignal } from '../../src/core/abort.js'

const kSignal = Symbol('toolgate.disconnect')

/**
 * Cancels a call when its client goes away before the response is written. A plain object
 * with one listener instead of an AbortController: Node 20 makes an AbortSignal slowly, and
 * this is on every call. The `close` listener is one shared function (no closure per call).
 */
class DisconnectSignal implements CancelSignal {
  aborted = false
  #listener: (() => void) | undefined

  addEventListener (_type: 'abort', listener: () => void): void {
    this.#listener = listener
  }

  removeEventListener (): void {
    this.#listener = undefined
  }

  fire (): void {
    this.aborted = true
    this.#listener?.()
  }
}

function onClose (this: ServerResponse & { [kSignal]?: DisconnectSignal }): void {
  if (!this.writableFinished) this[kSignal]?.fire()
}

export function disconnectSignalOf (reply: FastifyReply): CancelSignal {
  const signal = new DisconnectSignal()
  const raw = reply.raw as ServerResponse & { [kSignal]?: DisconnectSignal }
  raw[kSignal] = signal
  raw.on('close', onClose)
  return signal
}
