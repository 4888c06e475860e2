import type { ProgressUpdate } from '../../../core/progress.js'

/**
 * What the gateway does with an upstream server's `notifications/progress` for one call: its
 * known fields handed on to the caller (`ctx.progress`, which paces them and keeps them
 * increasing). A notification that is not one (no finite `progress`, a `total` or `message` of
 * the wrong type) is the server's fault: dropped and `onMalformed` told, never the call's failure.
 */
export function progressListener (onProgress: ((update: ProgressUpdate) => void) | undefined, onMalformed: () => void): ((params: unknown) => void) | undefined {
  if (onProgress === undefined) return undefined
  return params => {
    const update = progressOf(params)
    if (update === undefined) onMalformed()
    else onProgress(update)
  }
}

function progressOf (params: unknown): ProgressUpdate | undefined {
  if (typeof params !== 'object' || params === null) return undefined
  const { progress, total, message } = params as Record<string, unknown>
  if (typeof progress !== 'number' || !Number.isFinite(progress)) return undefined
  if (total !== undefined && (typeof total !== 'number' || !Number.isFinite(total))) return undefined
  if (message !== undefined && typeof message !== 'string') return undefined
  return { progress, ...(total === undefined ? {} : { total }), ...(message === undefined ? {} : { message }) }
}
