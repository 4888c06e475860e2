import { z } from 'zod'
import { DEFAULT_INPUT_BOUNDS, MAX_DEPTH_BOUND } from './input-bounds.js'

/** The core's defaults, which the gateway's settings (TOOL_TIMEOUT_MS, ...) also default to. */
export const CORE_DEFAULTS = { defaultTimeoutMs: 120_000, maxQueuePerDomain: 64, queueTimeoutMs: 30_000 } as const

/** The knobs of the in-process core; the server fills them from validated configuration. */
export const CoreOptionsSchema = z.object({
  /** Timeout of a tool that declares none. */
  defaultTimeoutMs: z.number().int().positive().max(2 ** 31 - 1).default(CORE_DEFAULTS.defaultTimeoutMs),
  /** Calls that may wait in one concurrency domain before more are refused with 429. */
  maxQueuePerDomain: z.number().int().min(0).default(CORE_DEFAULTS.maxQueuePerDomain),
  /** Longest wait for a slot before a queued call is refused with 503. */
  queueTimeoutMs: z.number().int().positive().max(2 ** 31 - 1).default(CORE_DEFAULTS.queueTimeoutMs),
  /**
   * After a call's signal aborted, how long its slot stays held while the tool has not
   * settled. Holding it keeps exclusivity; letting go in the end keeps a tool that ignores
   * its signal from blocking its domain forever.
   */
  abandonGraceMs: z.number().int().min(0).default(5_000),
  /**
   * Per-tool limits over every domain: at most `maxInFlight` calls of the tool run at once,
   * at most `maxQueue` wait for one of those slots (429 beyond, 503 after `queueTimeoutMs`).
   */
  /** How deep and wide an input may be; past it the call is refused (400) before any step walks it. */
  inputBounds: z.object({
    depth: z.number().int().min(1).max(MAX_DEPTH_BOUND),
    keys: z.number().int().min(1),
    items: z.number().int().min(1),
  }).default(DEFAULT_INPUT_BOUNDS),
  toolLimits: z.record(z.string(), z.object({ maxInFlight: z.number().int().min(1), maxQueue: z.number().int().min(0) })).default({}),
})

export type CoreOptions = z.output<typeof CoreOptionsSchema>
export type CoreOptionsInput = z.input<typeof CoreOptionsSchema>
export type ToolLimit = CoreOptions['toolLimits'][string]
