/** The part of autocannon's programmatic API the load worker uses (it ships no types). */
declare module 'autocannon' {
  import type { EventEmitter } from 'node:events'

  interface Options {
    url: string
    method?: string
    headers?: Record<string, string>
    body?: string
    connections?: number
    duration?: number
    amount?: number
    timeout?: number
  }

  interface Result {
    /** Seconds. */
    duration: number
    errors: number
    timeouts: number
    non2xx: number
    '2xx': number
    requests: { average: number, total: number, sent: number }
  }

  interface Instance extends EventEmitter {
    on (event: 'response', listener: (client: unknown, statusCode: number, resBytes: number, responseTimeMs: number) => void): this
  }

  function autocannon (options: Options, callback: (error: Error | null, result: Result) => void): Instance
  export default autocannon
}
