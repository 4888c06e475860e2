import { z } from 'zod'
import { isLoopback } from '../../loopback.js'

/*
 * How an upstream (a remote MCP server or an OpenAPI service) is reached as someone: the
 * `auth` key beside its `url` or `document` in the upstreams file. Without it, the static
 * `headers` are the only credential (every caller reaches the upstream as the operator).
 * Every mode's token goes only to the upstream it is declared on.
 */

const Url = z.string().min(1)

/** Where an OAuth client gets its tokens: an issuer (its metadata is discovered) or its token endpoint named outright. */
const TokenClient = {
  issuer: Url.optional(),
  tokenEndpoint: Url.optional(),
  clientId: z.string().min(1),
  clientSecret: z.string().min(1),
  /** How the client proves itself at the token endpoint (RFC 6749 section 2.3.1). */
  clientAuth: z.enum(['client_secret_basic', 'client_secret_post']).default('client_secret_basic'),
  /** Space-separated scopes asked for. */
  scope: z.string().min(1).optional(),
  /** RFC 8707 resource indicator: the upstream's own URL, for issuers that mint per-resource tokens. */
  resource: Url.optional(),
}

const ClientCredentials = z.object({ type: z.literal('client_credentials'), ...TokenClient }).strict()

const TokenExchange = z.object({
  type: z.literal('token_exchange'),
  ...TokenClient,
  /** RFC 8693 `audience`: the upstream, as the issuer names it. */
  audience: z.string().min(1).optional(),
}).strict()

/** A person's own account at the upstream's authorization server, linked once in the browser (authorization code with PKCE). */
const Link = z.object({
  type: z.literal('link'),
  /** Absent, for a remote MCP server: found as MCP clients find it, from its protected resource metadata. */
  issuer: Url.optional(),
  /** Absent: the gateway registers itself at the issuer (dynamic client registration, RFC 7591). */
  clientId: z.string().min(1).optional(),
  /** Absent: a public client, proved by PKCE alone. */
  clientSecret: z.string().min(1).optional(),
  clientAuth: TokenClient.clientAuth,
  scope: TokenClient.scope,
  resource: TokenClient.resource,
}).strict()

const HeaderTemplate = z.string().min(1).max(1024)

const SignedJwt = z.object({
  /** The header that carries it, `Authorization` (as `Bearer <jwt>`) by default. */
  header: z.string().min(1).default('Authorization'),
  /** `aud`: the upstream, as it checks it. */
  audience: z.string().min(1),
  /** `iss`: what the upstream checks, beside the gateway's JWKS (`GET /.well-known/jwks.json`). */
  issuer: z.string().min(1).default('toolgate'),
  /** How long one token is good for; each call gets its own. */
  ttlSeconds: z.number().int().min(10).max(3600).default(60),
}).strict()

const Identity = z.object({
  type: z.literal('identity'),
  /** Header values templated from the caller: `{principal.id}`, `{principal.scopes}`, `{principal.via}`. */
  headers: z.record(z.string(), HeaderTemplate).default({}),
  jwt: SignedJwt.optional(),
}).strict()

export const AuthSchema = z.discriminatedUnion('type', [ClientCredentials, TokenExchange, Link, Identity])

/**
 * A stdio server that takes a person's token from its environment (as GitHub's does): one
 * child per person, started on first use with their token (exchanged or linked) in `env`.
 */
const PerPerson = {
  /** The variable the person's access token goes in. */
  env: z.string().regex(/^[A-Za-z_][A-Za-z0-9_]*$/, 'an environment variable name'),
  /** Children at once, over all people; the least recently used idle one makes room. */
  maxChildren: z.number().int().min(1).max(1_000).default(16),
  /** A child no call used for this long is stopped. */
  idleSeconds: z.number().int().min(1).max(86_400).default(300),
}
export const StdioAuthSchema = z.discriminatedUnion('type', [
  TokenExchange.extend(PerPerson).strict(),
  Link.extend(PerPerson).strict(),
])

/** A stdio server's per-person children: the credential that makes each one's token, and where it goes. */
export interface PerPersonConfig {
  readonly auth: Extract<AuthConfig, { type: 'token_exchange' | 'link' }>
  readonly env: string
  readonly maxChildren: number
  readonly idleMs: number
}

export type AuthDeclaration = z.output<typeof AuthSchema>


/** An OAuth client's declaration once `${NAME}` is expanded and checked. */
export interface TokenClientConfig {
  /** Absent: `tokenEndpoint` is used as it is. */
  readonly issuer?: string
  readonly tokenEndpoint?: string
  readonly clientId: string
  /** Absent: a public client (a link's, proved by PKCE alone). */
  readonly clientSecret?: string
  readonly clientAuth: 'client_secret_basic' | 'client_secret_post'
  readonly scope?: string
  readonly resource?: string
}

/** A link's client: its issuer found from the server's metadata, and the client registered, when not declared. */
export type LinkClientConfig = Omit<TokenClientConfig, 'clientId'> & { readonly clientId?: string }

export type AuthConfig =
  | { readonly type: 'client_credentials', readonly client: TokenClientConfig }
  | { readonly type: 'token_exchange', readonly client: TokenClientConfig, readonly audience?: string }
  | { readonly type: 'link', readonly client: LinkClientConfig }
  | { readonly type: 'identity', readonly headers: Readonly<Record<string, string>>, readonly jwt?: z.output<typeof SignedJwt> }

const TEMPLATE = /\{([^{}]*)\}/g
const FIELDS = new Set(['principal.id', 'principal.scopes', 'principal.via'])
const HEADER_NAME = /^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/

/**
 * The `auth` of upstream `at`, checked: `${NAME}` expanded through `expand` (which records the
 * values as secrets), URLs that are URLs, an issuer or a token endpoint but not both, templates
 * naming only what a principal has. Problems go to `fail`, naming the field.
 */
export function authConfigOf (auth: AuthDeclaration, at: string, expand: (text: string, where: string) => string, fail: (where: string, problem: string) => never, secrets: string[]): AuthConfig {
  if (auth.type === 'identity') {
    const headers: Record<string, string> = {}
    for (const [name, template] of Object.entries(auth.headers)) {
      if (!HEADER_NAME.test(name)) fail(`${at}.auth.headers.${name}`, 'is not a header name')
      for (const [, field] of template.matchAll(TEMPLATE)) {
        if (!FIELDS.has(field!)) fail(`${at}.auth.headers.${name}`, `{${field!}} is not one of {principal.id}, {principal.scopes}, {principal.via}`)
      }
      if (/[\r\n\0]/.test(template)) fail(`${at}.auth.headers.${name}`, 'a header value cannot hold a line break')
      headers[name] = template
    }
    if (auth.jwt !== undefined && !HEADER_NAME.test(auth.jwt.header)) fail(`${at}.auth.jwt.header`, 'is not a header name')
    if (Object.keys(headers).length === 0 && auth.jwt === undefined) fail(`${at}.auth`, 'an identity needs "headers", "jwt" or both')
    return { type: 'identity', headers, ...(auth.jwt === undefined ? {} : { jwt: auth.jwt }) }
  }
  if (auth.type !== 'link' && (auth.issuer === undefined) === (auth.tokenEndpoint === undefined)) fail(`${at}.auth`, 'give either "issuer" (its metadata says where the token endpoint is) or "tokenEndpoint", not both')
  const url = (key: 'issuer' | 'tokenEndpoint' | 'resource'): string | undefined => {
    const text = key === 'tokenEndpoint' ? (auth.type === 'link' ? undefined : auth.tokenEndpoint) : auth[key]
    if (text === undefined) return undefined
    const value = expand(text, `auth.${key}`)
    const problem = urlProblem(value)
    if (problem !== undefined) fail(`${at}.auth.${key}`, problem)
    return value
  }
  const issuer = url('issuer')
  const tokenEndpoint = auth.type === 'link' ? undefined : url('tokenEndpoint')
  const resource = url('resource')
  const clientSecret = auth.clientSecret === undefined ? undefined : expand(auth.clientSecret, 'auth.clientSecret')
  if (clientSecret !== undefined) secrets.push(clientSecret)
  if (auth.type === 'link' && auth.clientId === undefined && clientSecret !== undefined) fail(`${at}.auth.clientSecret`, 'a secret needs its "clientId" (without both, the gateway registers a client of its own)')
  const common = {
    ...(issuer === undefined ? {} : { issuer }),
    ...(tokenEndpoint === undefined ? {} : { tokenEndpoint }),
    ...(clientSecret === undefined ? {} : { clientSecret }),
    clientAuth: auth.clientAuth,
    ...(auth.scope === undefined ? {} : { scope: auth.scope }),
    ...(resource === undefined ? {} : { resource }),
  }
  if (auth.type === 'link') return { type: 'link', client: { ...common, ...(auth.clientId === undefined ? {} : { clientId: expand(auth.clientId, 'auth.clientId') }) } }
  const client: TokenClientConfig = { ...common, clientId: expand(auth.clientId, 'auth.clientId') }
  if (auth.type === 'client_credentials') return { type: 'client_credentials', client }
  return { type: 'token_exchange', client, ...(auth.audience === undefined ? {} : { audience: auth.audience }) }
}

/** Why `text` cannot be where a secret or a token goes, or undefined: https, or http on a loopback address. */
export function urlProblem (text: string): string | undefined {
  let url: URL
  try {
    url = new URL(text)
  } catch {
    return 'is not a URL'
  }
  // A client secret or a token never crosses the network in the clear: plain http only to this machine.
  if (url.protocol === 'https:' || (url.protocol === 'http:' && isLoopback(url.hostname))) return undefined
  return 'must be an https:// URL (http:// only on a loopback address)'
}
