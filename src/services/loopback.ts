import { isIP } from 'node:net'

/**
 * Whether a host name or address is this machine's loopback: `localhost`, all of 127.0.0.0/8,
 * `::1` (bracketed too, as a URL's hostname has it).
 */
export function isLoopback (host: string): boolean {
  if (host === 'localhost') return true
  if (isIP(host) === 4) return host.startsWith('127.')
  return host === '::1' || host === '[::1]'
}
