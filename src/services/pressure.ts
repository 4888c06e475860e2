import { monitorEventLoopDelay, type IntervalHistogram } from 'node:perf_hooks'

export interface PressureLimits {
  /** Mean event-loop delay over a sample interval, in ms; 0 turns the check off. */
  readonly maxEventLoopDelayMs: number
  readonly maxHeapUsedBytes: number
  readonly maxRssBytes: number
}

export interface Pressure {
  readonly type: 'eventLoopDelay' | 'heapUsedBytes' | 'rssBytes'
  readonly value: number
}

/** The histogram's resolution, in ms; it is also the delay an idle loop shows. */
const RESOLUTION_MS = 10

/**
 * Is the process overloaded? Sampled on a timer (once a second by default), never per
 * request: a request reads `current`, one field. The event-loop delay is the mean over the
 * last interval, less the histogram's own resolution; an interval without a single sample
 * (the loop was blocked by one long task, such as start-up) reads as no delay rather than an
 * infinite one, since the loop that is answering the request is plainly running again.
 */
export class PressureMonitor {
  /** What is over its limit at the last sample, if anything. */
  current: Pressure | undefined
  readonly #limits: PressureLimits
  readonly #histogram: IntervalHistogram | undefined
  readonly #timer: NodeJS.Timeout | undefined

  constructor (limits: PressureLimits, sampleIntervalMs = 1_000) {
    this.#limits = limits
    if (!PressureMonitor.checks(limits)) return
    if (limits.maxEventLoopDelayMs > 0) {
      this.#histogram = monitorEventLoopDelay({ resolution: RESOLUTION_MS })
      this.#histogram.enable()
    }
    this.#timer = setInterval(() => { this.sample() }, sampleIntervalMs)
    this.#timer.unref()
  }

  /**
   * Forget what was seen so far. Start-up blocks the loop on purpose (loading tools, building
   * the OpenAPI document): that is not pressure, and must not refuse the first calls.
   */
  reset (): void {
    this.#histogram?.reset()
    this.current = undefined
  }

  /** True when any limit is set; otherwise the monitor samples nothing. */
  static checks (limits: PressureLimits): boolean {
    return limits.maxEventLoopDelayMs > 0 || limits.maxHeapUsedBytes > 0 || limits.maxRssBytes > 0
  }

  /** Take a sample now (the timer does this; tests may too). */
  sample (): void {
    const { maxEventLoopDelayMs, maxHeapUsedBytes, maxRssBytes } = this.#limits
    let pressure: Pressure | undefined
    if (this.#histogram !== undefined) {
      const mean = this.#histogram.mean
      this.#histogram.reset()
      const delay = Number.isNaN(mean) ? 0 : Math.max(0, mean / 1e6 - RESOLUTION_MS)
      if (delay > maxEventLoopDelayMs) pressure = { type: 'eventLoopDelay', value: delay }
    }
    if (pressure === undefined && maxHeapUsedBytes > 0) {
      const heapUsed = process.memoryUsage().heapUsed
      if (heapUsed > maxHeapUsedBytes) pressure = { type: 'heapUsedBytes', value: heapUsed }
    }
    if (pressure === undefined && maxRssBytes > 0) {
      const rss = process.memoryUsage.rss()
      if (rss > maxRssBytes) pressure = { type: 'rssBytes', value: rss }
    }
    this.current = pressure
  }

  close (): void {
    clearInterval(this.#timer)
    this.#histogram?.disable()
  }
}
