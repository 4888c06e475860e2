import { describe, expect, it } from 'vitest'
import { forbiddenAddressReason, isForbiddenAddress, isLoopbackAddress } from '../../tools/fetch/address.js'
import { isHostAllowed, parseAllowedHost, fetchSettingsFromEnv } from '../../tools/fetch/config.js'

// Pure checks only: nothing here opens a connection.
describe('isForbiddenAddress', () => {
  it.each([
    ['127.0.0.1', 'loopback'], ['127.255.255.254', 'loopback'],
    ['10.0.0.1', 'private'], ['10.255.255.255', 'private'],
    ['172.16.0.1', 'private'], ['172.31.255.255', 'private'],
    ['192.168.1.1', 'private'],
    ['169.254.169.254', 'link-local'],
    ['100.64.0.1', 'carrier-grade NAT'], ['100.127.255.255', 'carrier-grade NAT'],
    ['0.0.0.0', 'unspecified ("this network")'], ['0.1.2.3', 'unspecified ("this network")'],
    ['224.0.0.1', 'multicast'], ['239.255.255.250', 'multicast'],
    ['255.255.255.255', 'reserved or broadcast'], ['240.0.0.1', 'reserved or broadcast'],
    ['192.0.2.1', 'documentation'], ['198.18.0.1', 'benchmarking'], ['192.0.0.8', 'IETF protocol assignments'],
    ['::1', 'loopback'], ['0:0:0:0:0:0:0:1', 'loopback'],
    ['::', 'unspecified'],
    ['fe80::1', 'link-local'], ['fe80::1%eth0', 'link-local'], ['febf::1', 'link-local'],
    ['fc00::1', 'unique local'], ['fd12:3456:789a::1', 'unique local'],
    ['ff02::1', 'multicast'], ['ff05::1:3', 'multicast'],
    ['fec0::1', 'site-local (deprecated)'],
    ['::ffff:127.0.0.1', 'IPv4-mapped loopback'], ['::ffff:7f00:1', 'IPv4-mapped loopback'], ['::FFFF:10.1.2.3', 'IPv4-mapped private'],
    ['::ffff:169.254.169.254', 'IPv4-mapped link-local'], ['::ffff:0.0.0.0', 'IPv4-mapped unspecified ("this network")'],
    ['64:ff9b::7f00:1', 'NAT64 loopback'], ['64:ff9b::192.168.0.1', 'NAT64 private'],
    ['2002:7f00:1::', '6to4 loopback'], ['2002:a00:1::1', '6to4 private'],
    ['2001:db8::1', 'documentation'],
    ['2001:0:4136:e378:8000:63bf:3fff:fdd2', 'IETF protocol assignments (Teredo, benchmarking, ORCHID)'],
    ['::127.0.0.1', 'not global unicast (outside 2000::/3)'], ['100::1', 'not global unicast (outside 2000::/3)'],
  ])('refuses %s (%s)', (ip, reason) => {
    expect(forbiddenAddressReason(ip)).toBe(reason)
    expect(isForbiddenAddress(ip)).toBe(true)
  })

  it.each([
    '93.184.216.34', '1.1.1.1', '8.8.8.8', '172.15.255.255', '172.32.0.1', '100.63.255.255', '100.128.0.1', '192.169.0.1', '223.255.255.255', '11.0.0.1',
    '2606:4700::1', '2a00:1450:4001:80b::200e', '2001:4860:4860::8888', '::ffff:93.184.216.34', '64:ff9b::5db8:d822', '2002:5db8:d822::1',
  ])('allows the public address %s', ip => {
    expect(forbiddenAddressReason(ip)).toBeUndefined()
  })

  it.each(['', 'localhost', 'example.com', '1.2.3', '256.1.1.1', '010.0.0.1', '0x7f.0.0.1', '::ffff:999.0.0.1', '1::2::3', '[::1'])('refuses what is not an IP address: %j', value => {
    expect(isForbiddenAddress(value)).toBe(true)
  })

  it('names loopback addresses, the only exception a test may open', () => {
    expect(['127.0.0.1', '::1', '::ffff:127.0.0.1'].every(isLoopbackAddress)).toBe(true)
    expect(['10.0.0.1', '64:ff9b::7f00:1', '93.184.216.34', 'fe80::1'].some(isLoopbackAddress)).toBe(false)
  })
})

describe('the host allowlist', () => {
  const allowed = ['example.com', 'api.example.org:8443', '*.docs.example.net', '[2606:4700::1]'].map(parseAllowedHost)
  it.each([
    ['https://example.com/a', true], ['http://EXAMPLE.com./', true], ['http://example.com:8080/', true],
    ['https://sub.example.com/', false], ['https://example.com.evil.io/', false],
    ['https://api.example.org:8443/', true], ['https://api.example.org/', false],
    ['https://a.docs.example.net/', true], ['https://a.b.docs.example.net/', true], ['https://docs.example.net/', false], ['https://xdocs.example.net/', false],
    ['http://[2606:4700::1]/', true], ['http://[2606:4700::2]/', false],
  ])('%s allowed: %s', (url, expected) => {
    expect(isHostAllowed(new URL(url), allowed)).toBe(expected)
  })

  it('reads FETCH_ALLOWED_HOSTS and FETCH_MAX_BYTES, empty allowlist by default', () => {
    expect(fetchSettingsFromEnv({})).toEqual({ allowedHosts: [], maxBytes: 1024 * 1024 })
    expect(fetchSettingsFromEnv({ FETCH_ALLOWED_HOSTS: ' example.com , *.x.org ', FETCH_MAX_BYTES: '2048' })).toEqual({
      allowedHosts: [{ hostname: 'example.com', subdomains: false }, { hostname: 'x.org', subdomains: true }], maxBytes: 2048,
    })
  })

  it('names the bad setting', () => {
    expect(() => fetchSettingsFromEnv({ FETCH_MAX_BYTES: 'lots' })).toThrow(/FETCH_MAX_BYTES/)
    expect(() => fetchSettingsFromEnv({ FETCH_MAX_BYTES: '0' })).toThrow(/FETCH_MAX_BYTES/)
    expect(() => fetchSettingsFromEnv({ FETCH_ALLOWED_HOSTS: 'example.com/path' })).toThrow(/FETCH_ALLOWED_HOSTS.*example\.com\/path/)
    expect(() => fetchSettingsFromEnv({ FETCH_ALLOWED_HOSTS: 'user@example.com' })).toThrow(/FETCH_ALLOWED_HOSTS/)
  })
})
