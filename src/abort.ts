/**
 * Why a call's signal aborted. The pipeline tells timeout, cancellation and shutdown apart by
 * the reason it put on the signal itself, never by guessing from the tool's error.
 */
export class AbortReason extends Error {
  constructor (readonly kind: 'timeout' | 'cancelled' | 'shutdown', message: string) {
    super(message)
    this.name = kind === 'timeout' ? 'TimeoutError' : 'AbortError'
  }
}

/**
 * Abort `controller` when any of `signals` aborts; returns the function that unlinks them.
 * Cheaper than `AbortSignal.any` on the hot path and leaves no listener behind.
 */
export function linkSignals (controller: AbortController, signals: ReadonlyArray<AbortSignal | undefined>, reason: (signal: AbortSignal) => AbortReason): () => void {
  const links: Array<[AbortSignal, () => void]> = []
  for (const signal of signals) {
    if (signal === undefined) continue
    if (signal.aborted) {
      controller.abort(reason(signal))
      break
    }
    const onAbort = (): void => { controller.abort(reason(signal)) }
    signal.addEventListener('abort', onAbort, { once: true })
    links.push([signal, onAbort])
  }
  return () => { for (const [signal, onAbort] of links) signal.removeEventListener('abort', onAbort) }
}
