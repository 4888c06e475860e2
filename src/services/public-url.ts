import type { Config } from './config.js'

/**
 * Where people reach this gateway in a browser: `APPROVALS_PUBLIC_URL` (behind a proxy, the
 * address they use), else the address it listens on. The approvals page's links in webhooks and
 * the connections page named in a call that needs a linked account both start with it.
 */
export function publicBaseUrl (config: Pick<Config, 'approvalsPublicUrl' | 'host' | 'port'>): string {
  // An IPv6 listen address needs brackets in a URL.
  return config.approvalsPublicUrl ?? `http://${config.host.includes(':') ? `[${config.host}]` : config.host}:${config.port}`
}
