/**
 * The app the gateway binds for each call: what `active`, `authorize` and `execute` see as
 * `ctx.app`. Plain data and functions, no HTTP: the REST adapter fills it from the request,
 * a test or another adapter can fill it just as well.
 */
export interface Principal {
  /** Stable id: the API key's principal name, a JWT's `sub`, or `anonymous`. */
  readonly id: string
  readonly scopes: readonly string[]
  /** How the caller proved who it is. */
  readonly via: 'api-key' | 'jwt' | 'anonymous'
}

/** The subset of a pino logger tools may use. */
export interface ToolLogger {
  info (obj: object, msg?: string): void
  warn (obj: object, msg?: string): void
  error (obj: object, msg?: string): void
  debug (obj: object, msg?: string): void
}

/** What a tool may ask of the gateway that serves it (read-only facts). */
export interface GatewayFacts {
  readonly version: string
  readonly startedAt: number
  toolIds (): string[]
  inFlight (): number
}

export interface GatewayApp {
  readonly principal: Principal
  readonly requestId: string
  /** The concurrency domain: the principal's, or one of its `X-Session-Id` sessions (an opaque key). */
  readonly domain: string
  readonly log: ToolLogger
  readonly gateway: GatewayFacts
}

/**
 * Scopes a principal needs: listing and docs, calling tools, deciding approvals (escalation is
 * approved per call, never by a scope), and reading what the gateway did (the operators' console).
 */
export const SCOPES = { read: 'tools:read', call: 'tools:call', approve: 'tools:approve', gatewayRead: 'gateway:read' } as const
