import { MODERN_VERSIONS } from './modern.js'
import { LEGACY_VERSIONS } from './protocol.js'

/** The revisions this endpoint speaks; `MCP-Protocol-Version` must name one of them. */
export const SUPPORTED_VERSIONS: readonly string[] = [...MODERN_VERSIONS, ...LEGACY_VERSIONS]

export function isSupportedVersion (version: string): boolean {
  return SUPPORTED_VERSIONS.includes(version)
}

/**
 * DNS-rebinding guard (MCP Streamable HTTP, "Security warning"): a request that carries an
 * `Origin` must come from the gateway's own host or a configured origin. Requests without
 * one (agents, SDKs, curl) are not browsers and pass.
 */
export function originAllowed (origin: string | undefined, host: string | undefined, allowed: readonly string[]): boolean {
  if (origin === undefined) return true
  if (allowed.includes('*') || allowed.includes(origin)) return true
  try {
    return host !== undefined && new URL(origin).host === host
  } catch {
    return false
  }
}
