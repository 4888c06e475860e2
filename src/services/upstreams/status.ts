/*
 * What every upstream, MCP server or HTTP service, tells the gateway: how it is, and where it
 * logs. Shared by both rooms (mcp/, openapi/) and the object that owns them all.
 */

export type UpstreamState = 'starting' | 'up' | 'down' | 'closed'

export interface UpstreamLog {
  info (object: object, message: string): void
  warn (object: object, message: string): void
  error (object: object, message: string): void
}

export interface UpstreamStatus {
  readonly name: string
  readonly transport: 'stdio' | 'http' | 'sse' | 'openapi'
  readonly state: UpstreamState
  readonly required: boolean
  readonly tools: number
  readonly restarts: number
  readonly inFlight: number
  /** When the server last changed state (epoch ms). */
  readonly since: number
  /** The negotiated protocol version while up. */
  readonly protocolVersion?: string
  /** Why it is down (or, for a service, why its last reload failed), with every configured secret taken out. */
  readonly lastError?: string
  /** How calls reach it beyond its static headers (absent: those alone); never the credential itself. */
  readonly auth?: 'client_credentials' | 'token_exchange' | 'link' | 'identity'
  /** A stdio server run once per person: its children running now. */
  readonly children?: number
  /** A service's operations that are not served, and why. */
  readonly skipped?: ReadonlyArray<{ readonly operation: string, readonly why: string }>
}
