/**
 * Soak: sustained mixed load over every shipped tool against a real gateway process.
 *
 *   npx tsx scripts/soak.ts [seconds]     (default 60; CI runs 60)
 *
 * Starts `node dist/bin/toolgate.js serve` on a free 127.0.0.1 port, warms it up, then
 * drives the mix of scripts/soak/mix.ts with autocannon for the given seconds, sampling the
 * child's RSS every 5 s. Exits 1 unless: 0 errors, 0 timeouts, only the answers each request
 * may get, and RSS flat: after the load and 20 s idle, at most 15 % above what it was after the
 * warm-up and 20 s idle. Under load RSS is a sawtooth, not a level: the old generation fills
 * with what lived a while (idempotency records, a few seconds each) until a full collection
 * clears it, 50 to 70 s apart here, so a sample taken under load lands anywhere between trough
 * and peak (peaks 40 % above the troughs in a 150 s run that held 136 -> 148 MB). Idle, V8's
 * memory reducer runs full collections and gives back what is free; what stays is what the
 * gateway holds, and that is what a leak grows. The samples under load are printed too.
 */
import { fileURLToPath } from 'node:url'
import { hashApiKey } from '../src/services/auth/api-keys.js'
import { fire, type CannonResult } from './soak/autocannon.js'
import { startGateway, type GatewayProcess } from './soak/gateway-process.js'
import { soakRequests, Tally } from './soak/mix.js'

const SECONDS = Number(process.argv[2] ?? 60)
const WARM_UP_SECONDS = 10
const CONNECTIONS = 20
const SAMPLE_EVERY_MS = 5_000
const RSS_TOLERANCE = 0.15
/** Idle time before each level is read: V8's memory reducer runs about 16 s into idling. */
const SETTLE_MS = 20_000
const API_KEY = 'soak-key-0123456789abcdef'

if (!Number.isInteger(SECONDS) || SECONDS < 5) {
  console.error('usage: npx tsx scripts/soak.ts [seconds]   (a whole number, at least 5)')
  process.exit(2)
}

const CONFIG = {
  logLevel: 'warn',
  apiKeys: [{
    principal: 'soak',
    sha256: hashApiKey(API_KEY),
    scopes: ['tools:read', 'tools:call', 'ledger:transfer', 'ledger:transfer:large'],
  }],
  // The embedded idempotency store never drops a live record (a full store refuses new keys),
  // so it is bounded here by a short lifetime: it reaches its steady state (rate x TTL records)
  // during warm-up, and a flat RSS afterwards means no leak, not "the store has not filled up yet".
  idempotencyTtlMs: 2_000,
}

const mb = (bytes: number): string => `${(bytes / 1024 / 1024).toFixed(1)} MB`

async function load (gateway: GatewayProcess, seconds: number, tally: Tally): Promise<CannonResult> {
  return await fire({ url: gateway.url, connections: CONNECTIONS, duration: seconds, timeout: 10, requests: soakRequests(API_KEY, tally) })
}

/** Run the measured phase, sampling RSS at its start, every 5 s, and at its end. */
async function measured (gateway: GatewayProcess, tally: Tally): Promise<{ result: CannonResult, rss: number[] }> {
  const rss = [gateway.rss()]
  const sampler = setInterval(() => { if (gateway.exited() === undefined) rss.push(gateway.rss()) }, SAMPLE_EVERY_MS)
  try {
    const result = await load(gateway, SECONDS, tally)
    rss.push(gateway.rss())
    return { result, rss }
  } finally {
    clearInterval(sampler)
  }
}

/** RSS after SETTLE_MS with nothing to do. */
async function settledRss (gateway: GatewayProcess): Promise<number> {
  await new Promise(resolve => setTimeout(resolve, SETTLE_MS))
  return gateway.rss()
}

function report (result: CannonResult, tally: Tally, rss: number[], settled: { before: number, after: number }): string[] {
  const failures: string[] = []
  console.log(`\n== soak: ${SECONDS} s, ${CONNECTIONS} connections, after ${WARM_UP_SECONDS} s of warm-up`)
  console.log(`requests: ${result.requests.total} (${result.requests.average.toFixed(0)} req/s); latency p50 ${result.latency.p50} ms, p99 ${result.latency.p99} ms, max ${result.latency.max} ms`)
  console.log(`errors: ${result.errors}, timeouts: ${result.timeouts}`)
  console.log(`status codes: ${Object.entries(result.statusCodeStats).map(([code, { count }]) => `${code}: ${count}`).join(', ')}`)
  for (const [step, outcomes] of tally.outcomes) {
    console.log(`  ${step.padEnd(32)} ${[...outcomes].map(([outcome, count]) => `${outcome} x${count}`).join(', ')}`)
  }
  const growth = (settled.after - settled.before) / settled.before
  console.log(`RSS under load, every ${SAMPLE_EVERY_MS / 1000} s: ${rss.map(mb).join(', ')}`)
  console.log(`RSS idle ${SETTLE_MS / 1000} s after the warm-up ${mb(settled.before)}, after the load ${mb(settled.after)}: ${(growth * 100).toFixed(1)} % (allowed: at most +${RSS_TOLERANCE * 100} %)`)
  if (result.errors !== 0) failures.push(`${result.errors} errors`)
  if (result.timeouts !== 0) failures.push(`${result.timeouts} timeouts`)
  for (const [what, { count, example }] of tally.violations) failures.push(`${what} (x${count}), e.g. ${example}`)
  if (growth > RSS_TOLERANCE) failures.push(`RSS grew ${(growth * 100).toFixed(1)} % over the load, idle before and after (${mb(settled.before)} -> ${mb(settled.after)})`)
  return failures
}

async function main (): Promise<number> {
  const root = fileURLToPath(new URL('..', import.meta.url))
  const gateway = await startGateway(root, CONFIG)
  console.log(`gateway pid ${gateway.pid} at ${gateway.url}; warming up for ${WARM_UP_SECONDS} s`)
  try {
    const warm = await load(gateway, WARM_UP_SECONDS, new Tally())
    console.log(`warm-up: ${warm.requests.total} requests, ${warm.errors} errors, RSS ${mb(gateway.rss())}; idle ${SETTLE_MS / 1000} s`)
    const before = await settledRss(gateway)
    const tally = new Tally()
    const { result, rss } = await measured(gateway, tally)
    const after = await settledRss(gateway)
    const failures = report(result, tally, rss, { before, after })
    if (gateway.exited() !== undefined) failures.push(`the gateway died: ${gateway.exited()}\n${gateway.logTail()}`)
    if (failures.length === 0) {
      console.log('soak passed')
      return 0
    }
    console.error(`soak FAILED:\n- ${failures.join('\n- ')}`)
    if (gateway.logTail() !== '') console.error(`gateway log (warnings and errors, tail):\n${gateway.logTail()}`)
    return 1
  } finally {
    await gateway.stop()
  }
}

main().then(code => { process.exitCode = code }, (error: unknown) => {
  console.error(`soak: ${(error as Error).stack ?? String(error)}`)
  process.exitCode = 1
})
