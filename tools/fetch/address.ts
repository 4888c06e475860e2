import { isIPv4, isIPv6 } from 'node:net'

/*
 * Which IP addresses the fetcher may connect to. Fail closed: anything that does not parse is
 * forbidden; IPv6 outside global unicast (2000::/3) is forbidden unless it embeds an IPv4
 * address (IPv4-mapped, NAT64), which is then judged as that IPv4 address.
 */

interface Range { readonly base: bigint, readonly bits: number, readonly width: 32 | 128, readonly reason: string }

const range = (width: 32 | 128) => (cidr: string, reason: string): Range => {
  const [address, bits] = cidr.split('/') as [string, string]
  const base = width === 32 ? parseIPv4(address) : parseIPv6(address)
  if (base === undefined) throw new Error(`bad range ${cidr}`)
  return { base, bits: Number(bits), width, reason }
}
const v4 = range(32)
const v6 = range(128)

/** Special-purpose IPv4 blocks (RFC 6890 and successors) a public fetch has no business with. */
const FORBIDDEN_V4: readonly Range[] = [
  v4('0.0.0.0/8', 'unspecified ("this network")'),
  v4('10.0.0.0/8', 'private'),
  v4('100.64.0.0/10', 'carrier-grade NAT'),
  v4('127.0.0.0/8', 'loopback'),
  v4('169.254.0.0/16', 'link-local'),
  v4('172.16.0.0/12', 'private'),
  v4('192.0.0.0/24', 'IETF protocol assignments'),
  v4('192.0.2.0/24', 'documentation'),
  v4('192.88.99.0/24', '6to4 relay anycast'),
  v4('192.168.0.0/16', 'private'),
  v4('198.18.0.0/15', 'benchmarking'),
  v4('198.51.100.0/24', 'documentation'),
  v4('203.0.113.0/24', 'documentation'),
  v4('224.0.0.0/4', 'multicast'),
  v4('240.0.0.0/4', 'reserved or broadcast'),
]

/** IPv6 blocks named for a precise reason; the rest outside 2000::/3 is refused generically. */
const FORBIDDEN_V6: readonly Range[] = [
  v6('::/128', 'unspecified'),
  v6('::1/128', 'loopback'),
  v6('fe80::/10', 'link-local'),
  v6('fec0::/10', 'site-local (deprecated)'),
  v6('fc00::/7', 'unique local'),
  v6('ff00::/8', 'multicast'),
  v6('2001::/23', 'IETF protocol assignments (Teredo, benchmarking, ORCHID)'),
  v6('2001:db8::/32', 'documentation'),
  v6('3fff::/20', 'documentation'),
]
const GLOBAL_UNICAST = v6('2000::/3', 'global unicast')
const MAPPED = v6('::ffff:0:0/96', 'IPv4-mapped')
const NAT64 = v6('64:ff9b::/96', 'NAT64')
const SIX_TO_FOUR = v6('2002::/16', '6to4')

function inRange (value: bigint, r: Range): boolean {
  const shift = BigInt(r.width - r.bits)
  return value >> shift === r.base >> shift
}

/**
 * Why the fetcher must not connect to `ip`, or `undefined` when it may: private, loopback,
 * link-local, unique-local, CGNAT, multicast, unspecified, reserved and documentation ranges
 * of IPv4 and IPv6, IPv4-mapped and NAT64 forms included. Anything unparsable is refused.
 */
export function forbiddenAddressReason (ip: string): string | undefined {
  if (isIPv4(ip)) return reasonV4(parseIPv4(ip)!)
  const value = parseIPv6(ip)
  if (value === undefined) return 'not an IP address'
  if (inRange(value, MAPPED)) return embedded('IPv4-mapped', value & 0xffff_ffffn)
  if (inRange(value, NAT64)) return embedded('NAT64', value & 0xffff_ffffn)
  if (inRange(value, SIX_TO_FOUR)) return embedded('6to4', (value >> 80n) & 0xffff_ffffn)
  const named = FORBIDDEN_V6.find(r => inRange(value, r))
  if (named !== undefined) return named.reason
  return inRange(value, GLOBAL_UNICAST) ? undefined : 'not global unicast (outside 2000::/3)'
}

/** True when the fetcher must not connect to `ip`; see {@link forbiddenAddressReason}. */
export function isForbiddenAddress (ip: string): boolean {
  return forbiddenAddressReason(ip) !== undefined
}

/** True for 127.0.0.0/8, ::1 and their IPv4-mapped forms: the only exception tests may open. */
export function isLoopbackAddress (ip: string): boolean {
  const reason = forbiddenAddressReason(ip)
  return reason === 'loopback' || reason === 'IPv4-mapped loopback'
}

function reasonV4 (value: bigint): string | undefined {
  return FORBIDDEN_V4.find(r => inRange(value, r))?.reason
}

function embedded (form: string, ipv4: bigint): string | undefined {
  const reason = reasonV4(ipv4)
  return reason === undefined ? undefined : `${form} ${reason}`
}

function parseIPv4 (ip: string): bigint | undefined {
  if (!isIPv4(ip)) return undefined
  return ip.split('.').reduce((acc, octet) => (acc << 8n) | BigInt(Number(octet)), 0n)
}

/** An IPv6 address (zone id and a trailing dotted quad allowed) as a 128-bit number. */
function parseIPv6 (ip: string): bigint | undefined {
  let s = ip.toLowerCase()
  if (s.startsWith('[') && s.endsWith(']')) s = s.slice(1, -1)
  const zone = s.indexOf('%')
  if (zone !== -1) s = s.slice(0, zone)
  if (!isIPv6(s)) return undefined
  const lastColon = s.lastIndexOf(':')
  const tail = s.slice(lastColon + 1)
  if (tail.includes('.')) {
    const quad = parseIPv4(tail)
    if (quad === undefined) return undefined
    s = `${s.slice(0, lastColon + 1)}${(quad >> 16n).toString(16)}:${(quad & 0xffffn).toString(16)}`
  }
  const [head = '', rest] = s.split('::') as [string, string | undefined]
  const left = head === '' ? [] : head.split(':')
  const right = rest === undefined || rest === '' ? [] : rest.split(':')
  const groups = rest === undefined ? left : [...left, ...Array<string>(8 - left.length - right.length).fill('0'), ...right]
  if (groups.length !== 8) return undefined
  return groups.reduce((acc, group) => (acc << 16n) | BigInt(parseInt(group, 16)), 0n)
}
