import type { FastifyBaseLogger } from 'fastify'
import type { FastifyChildLoggerFactory } from 'fastify/types/logger.js'

type Level = 'fatal' | 'error' | 'warn' | 'info' | 'debug' | 'trace'
const LEVELS: readonly Level[] = ['fatal', 'error', 'warn', 'info', 'debug', 'trace']

/**
 * A request's logger that makes its pino child (with the request id) only when a line is
 * actually written. Fastify makes one child per request; at `warn`, most requests never log,
 * and the child costs about a microsecond each.
 */
class LazyChildLogger {
  #child: FastifyBaseLogger | undefined

  constructor (readonly parent: FastifyBaseLogger, readonly bindings: Record<string, unknown>, readonly options: object) {}

  get level (): string {
    return this.#child?.level ?? this.parent.level
  }

  set level (level: string) {
    this.real().level = level
  }

  real (): FastifyBaseLogger {
    this.#child ??= this.parent.child(this.bindings, this.options)
    return this.#child
  }

  child (bindings: Record<string, unknown>, options?: object): FastifyBaseLogger {
    return this.real().child(bindings, options)
  }

  silent (): void {}
}

interface Levelled { isLevelEnabled?: (level: string) => boolean }

for (const level of LEVELS) {
  Object.defineProperty(LazyChildLogger.prototype, level, {
    value: function (this: LazyChildLogger, ...args: unknown[]) {
      const enabled = (this.parent as Levelled).isLevelEnabled?.(level) ?? true
      if (enabled) (this.real()[level] as (...a: unknown[]) => void)(...args)
    },
  })
}

/**
 * Fastify's `childLoggerFactory`, making children of `root`. Fastify itself is given no logger
 * (see `buildApp`), so the logger it passes in is a no-op one and is ignored.
 */
export function requestLoggers (root: FastifyBaseLogger): FastifyChildLoggerFactory {
  return (_logger, bindings, options) => new LazyChildLogger(root, bindings as Record<string, unknown>, options) as unknown as FastifyBaseLogger
}
