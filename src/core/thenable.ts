/**
 * Is this a promise-like a tool returned? Tools may return values or promises; the pipeline
 * waits only for the latter, so a synchronous tool costs no promise and no microtask hop.
 */
export function isThenable (value: unknown): value is PromiseLike<unknown> {
  return value !== null && (typeof value === 'object' || typeof value === 'function') && typeof (value as { then?: unknown }).then === 'function'
}
