/*
 * Revision 2026-07-28 of MCP on the same endpoint: no `initialize` and no session; every
 * request carries its protocol version and client capabilities in `params._meta`, and over
 * HTTP mirrors its method (and tool name) in headers that must agree with the body.
 */
import { JSON_RPC, JsonRpcError, type JsonRpcCall } from './json-rpc.js'

export const MODERN_VERSION = '2026-07-28'
export const MODERN_VERSIONS: readonly string[] = [MODERN_VERSION]

export const META = {
  protocolVersion: 'io.modelcontextprotocol/protocolVersion',
  clientInfo: 'io.modelcontextprotocol/clientInfo',
  clientCapabilities: 'io.modelcontextprotocol/clientCapabilities',
  serverInfo: 'io.modelcontextprotocol/serverInfo',
} as const

/** The 2026-07-28 error codes the transport rules use (beside JSON-RPC's own). */
export const MODERN_ERRORS = { headerMismatch: -32020, unsupportedVersion: -32022 } as const

/** Which params field each method's `Mcp-Name` header mirrors (the methods this server has). */
const NAME_SOURCE: Readonly<Record<string, string>> = { 'tools/call': 'name', 'resources/read': 'uri', 'prompts/get': 'name' }
const BASE64_PREFIX = '=?base64?'
const BASE64_SUFFIX = '?='

/** The revision a message claims in its `_meta` envelope (body first), or undefined: the 2025 family. */
export function envelopeVersionOf (call: JsonRpcCall): string | undefined {
  const meta = call.params._meta
  if (typeof meta !== 'object' || meta === null) return undefined
  const version = (meta as Record<string, unknown>)[META.protocolVersion]
  return typeof version === 'string' ? version : undefined
}

export interface ModernHeaders {
  readonly protocolVersion?: string
  readonly method?: string
  readonly name?: string
}

/**
 * The transport checks of a 2026-07-28 request, in the specification's order: a supported
 * revision, then `MCP-Protocol-Version` and `Mcp-Method` present and equal to the body, then
 * `Mcp-Name` where the method has one. Each failure is an error with HTTP status 400.
 * Notifications are exempt from the header rules.
 */
export function checkModernRequest (call: JsonRpcCall, version: string, headers: ModernHeaders): void {
  if (!MODERN_VERSIONS.includes(version)) {
    throw new JsonRpcError(MODERN_ERRORS.unsupportedVersion, `Unsupported protocol version: ${version}`, { supported: MODERN_VERSIONS, requested: version }, 400)
  }
  if (headers.protocolVersion !== undefined && headers.protocolVersion !== version) {
    throw mismatch(`MCP-Protocol-Version ${headers.protocolVersion} disagrees with the body's ${version}`)
  }
  if (call.id === undefined) return
  if (headers.protocolVersion === undefined) throw mismatch('the MCP-Protocol-Version header is required')
  if (headers.method === undefined) throw mismatch('the Mcp-Method header is required')
  if (headers.method !== call.method) throw mismatch(`Mcp-Method ${headers.method} disagrees with the body's ${call.method}`)
  const field = NAME_SOURCE[call.method]
  if (field === undefined) return
  if (headers.name === undefined) throw mismatch('the Mcp-Name header is required for ' + call.method)
  if (decodeParam(headers.name) !== call.params[field]) throw mismatch(`Mcp-Name disagrees with params.${field}`)
}

/** A 2026-07-28 request whose header names the revision must carry the envelope too. */
export function requireEnvelope (call: JsonRpcCall, headerVersion: string | undefined): void {
  if (call.id !== undefined && headerVersion !== undefined && MODERN_VERSIONS.includes(headerVersion)) {
    throw new JsonRpcError(JSON_RPC.invalidParams, `missing params._meta["${META.protocolVersion}"]`, undefined, 400)
  }
}

function mismatch (message: string): JsonRpcError {
  return new JsonRpcError(MODERN_ERRORS.headerMismatch, message, undefined, 400)
}

/** Header values that are not plain ASCII travel as `=?base64?...?=`. */
function decodeParam (value: string): string {
  if (value.startsWith(BASE64_PREFIX) && value.endsWith(BASE64_SUFFIX)) {
    return Buffer.from(value.slice(BASE64_PREFIX.length, -BASE64_SUFFIX.length), 'base64').toString('utf8')
  }
  return value
}
