import { createRequire } from 'node:module'

/*
 * The part of autocannon's programmatic API the soak uses. autocannon ships no types; loading
 * it through `require` keeps these types local instead of declaring the module globally.
 */

export interface CannonRequest {
  method?: string
  path?: string
  headers?: Record<string, string>
  body?: string
  /** Called before each send; may rewrite the request. `context` lives for one pass over `requests`. */
  setupRequest?: (request: CannonRequest, context: Record<string, unknown>) => CannonRequest
  onResponse?: (status: number, body: string, context: Record<string, unknown>, headers: Record<string, string | string[]>) => void
}

export interface CannonOptions {
  url: string
  connections: number
  duration: number
  timeout?: number
  requests: CannonRequest[]
}

export interface CannonResult {
  duration: number
  errors: number
  timeouts: number
  non2xx: number
  statusCodeStats: Record<string, { count: number }>
  requests: { average: number, total: number, sent: number }
  latency: { p50: number, p99: number, max: number }
}

type Autocannon = (options: CannonOptions, callback: (error: Error | null, result: CannonResult) => void) => unknown

const autocannon = createRequire(import.meta.url)('autocannon') as Autocannon

/** Run one load phase to its end. */
export async function fire (options: CannonOptions): Promise<CannonResult> {
  return await new Promise((resolve, reject) => {
    autocannon(options, (error, result) => { if (error === null) resolve(result); else reject(error) })
  })
}
