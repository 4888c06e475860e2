/**
 * Credentials in a URL end up in access logs, proxy logs and browser history. The gateway never
 * reads them there; it refuses a request that carries one (so the client learns to stop) and
 * keeps the value out of its own log lines.
 */

/** Query parameter names that carry a credential, compared without case, `-` or `_`. */
const CREDENTIAL_NAMES = new Set([
  'apikey', 'xapikey', 'key', 'token', 'accesstoken', 'idtoken', 'refreshtoken', 'authtoken', 'bearer', 'jwt',
  'authorization', 'auth', 'password', 'passwd', 'secret', 'clientsecret', 'sessiontoken', 'signature', 'sig',
])

function isCredentialName (name: string): boolean {
  return CREDENTIAL_NAMES.has(name.toLowerCase().replace(/[-_]/g, ''))
}

/** The credential-bearing parameter names in `url`'s query string, in order; none without a query. */
export function credentialParamsOf (url: string): string[] {
  const mark = url.indexOf('?')
  if (mark === -1) return []
  const names: string[] = []
  for (const name of new URLSearchParams(url.slice(mark + 1)).keys()) {
    if (isCredentialName(name) && !names.includes(name)) names.push(name)
  }
  return names
}

/** `url` with every credential parameter's value replaced, for log lines. */
export function redactUrl (url: string): string {
  const mark = url.indexOf('?')
  if (mark === -1) return url
  return url.slice(0, mark + 1) + url.slice(mark + 1).split('&').map(pair => {
    const eq = pair.indexOf('=')
    const raw = eq === -1 ? pair : pair.slice(0, eq)
    let name = raw
    try { name = decodeURIComponent(raw.replace(/\+/g, ' ')) } catch { /* a malformed escape: judge the raw name */ }
    return eq !== -1 && isCredentialName(name) ? `${raw}=[REDACTED]` : pair
  }).join('&')
}
