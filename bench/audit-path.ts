/**
 * What the audit log costs a call on its own, without HTTP: the line of one audited call of the
 * bench's writing echo (`AuditTrail.call`, as the REST face calls it), built, chained and written
 * to a file in a temporary folder, in one process, CPU time per call (the writes' threads
 * included). Calls come 50 to a turn of the event loop, as 50 connections' would; each round
 * ends with a flush, so every line it made is on the disk. The loop's own cost (the records
 * and facts made, nothing audited) is measured beside it and taken off. Far steadier than a
 * req/s ratio on a 2-core machine: use it to compare a change, and the features bench for what
 * a user sees.
 *
 *   npm run bench:audit -- [--calls 200000] [--rounds 7] [--tree DIR] [--fsync]
 *
 * (Run with the loader the bench's servers run with, `runtime/register.mjs`: under tsx, whose
 * keepNames wraps every closure made in a `__name()` call, a call measured 1 to 3 us more.)
 *
 * `--tree` measures another checkout's code, for a before and after; `--fsync` syncs after
 * every write (`AUDIT_FSYNC=true`). Beside the CPU time, the heap bytes a call allocates, and
 * the same line made plainly with nothing but what its guarantees need (the input's digest, the
 * line's text as the trail writes it, its SHA-256 over the previous hash, one write per burst),
 * no queue, no drop accounting, no torn-line recovery: what the trail costs beyond that is its
 * own machinery, and what the plain line costs is the guarantees' own.
 */
import { closeSync, mkdtempSync, openSync, rmSync, write } from 'node:fs'
import { hash } from 'node:crypto'
import { tmpdir } from 'node:os'
import { join, resolve } from 'node:path'
import { getHeapStatistics } from 'node:v8'
import type { CallRecord } from '../src/core/call-record.js'
import { callFields, type CallFacts } from '../src/services/audit/call-line.js'
import { takeFlag } from './lib/args.js'
import { medianAndRange } from './lib/stats.js'

const args = process.argv.slice(2)
const calls = Number(takeFlag(args, 'calls', '200000'))
const rounds = Number(takeFlag(args, 'rounds', '7'))
const tree = resolve(takeFlag(args, 'tree', '.'))
const fsync = args.includes('--fsync')
const BURST = 50

const { AuditTrail } = await import(`${tree}/src/services/audit/audit-trail.ts`)
const dir = mkdtempSync(join(tmpdir(), 'toolgate-audit-bench-'))
const trail = await AuditTrail.open(join(dir, 'audit.log'), {
  // A buffer no burst of the bench fills (the gateway's 10,000 lines, a quarter per principal, would drop): every call is a line.
  includeInput: false, maxBuffered: 10_000_000, flushMs: 10, fsync, onDrop: () => { throw new Error('a line was dropped') }, onError: (error: unknown) => { throw error },
})

const effects = Object.freeze([])
let n = 0
/** One settled call of the writing echo, as the pipeline records it, and what the REST face knows of it. */
function settled (): [Record<string, unknown>, Record<string, unknown>] {
  n++
  const record = {
    callId: `${(0x10000000 + n).toString(16)}0123456789abcdef01234567`, toolId: 'echo', kind: 'write', effects, effectsLabel: 'none', readOnly: false,
    domain: 'bench', outcome: 'ok', status: 200, dryRun: false, escalated: false, executed: true, startedAt: Math.floor(performance.timeOrigin + performance.now()),
    queueMs: 0, executeMs: 0.011, durationMs: 0.04 + (n % 97) / 1000, touchedResources: effects, mutatedResources: effects, debugSteps: effects,
  }
  const facts = { principal: 'bench', source: '127.0.0.1', requestId: `${(0x20000000 + n).toString(16)}89abcdef0123456701234567`, input: { text: `hello from the bench, call ${n}` } }
  return [record, facts]
}

let kept: unknown
async function round (audited: boolean): Promise<number> {
  const before = process.cpuUsage()
  for (let i = 0; i < calls; i += BURST) {
    for (let j = 0; j < BURST; j++) {
      const [record, facts] = settled()
      if (audited) trail.call(record, facts)
      else kept = facts
    }
    await new Promise(resolve => setImmediate(resolve))
  }
  await trail.flush()
  const used = process.cpuUsage(before)
  return (used.user + used.system) / calls
}

/**
 * A round of plain lines: each call's line made as the trail makes its text and chained by hand,
 * a burst's lines written at once (the write's thread counted, as the trail's is).
 */
const plainFd = openSync(join(dir, 'plain.log'), 'w')
let plainSeq = 0
let plainHead = '0'.repeat(64)
async function plainRound (): Promise<number> {
  const before = process.cpuUsage()
  const writes: Array<Promise<void>> = []
  for (let i = 0; i < calls; i += BURST) {
    let burst = ''
    for (let j = 0; j < BURST; j++) {
      const [record, facts] = settled()
      const digest = `sha256:${hash('sha256', JSON.stringify(facts.input))}`
      const body = `{"type":"toolgate.audit/v1","seq":${++plainSeq},"prev":"${plainHead}",${callFields(record as unknown as CallRecord, facts as unknown as CallFacts, digest, undefined)}`
      plainHead = hash('sha256', body)
      burst += `${body},"hash":"${plainHead}"}\n`
    }
    const bytes = Buffer.from(burst)
    writes.push(new Promise((resolve, reject) => { write(plainFd, bytes, error => { if (error === null) resolve(); else reject(error) }) }))
    await new Promise(resolve => setImmediate(resolve))
  }
  await Promise.all(writes)
  const used = process.cpuUsage(before)
  return (used.user + used.system) / calls
}

/** Heap bytes per audited call: the heap's growth over bursts made without a pause, the median of those no collection ran in. */
function allocated (): number {
  const grown: number[] = []
  for (let i = 0; i < 15; i++) {
    const before = getHeapStatistics().used_heap_size
    for (let j = 0; j < 500; j++) { const [record, facts] = settled(); trail.call(record, facts) }
    const growth = getHeapStatistics().used_heap_size - before
    if (growth > 0) grown.push(growth / 500)
  }
  grown.sort((a, b) => a - b)
  return Math.round(grown[Math.floor(grown.length / 2)] ?? Number.NaN)
}

try {
  for (let i = 0; i < 2; i++) await round(true)
  const us: number[] = []
  const plain: number[] = []
  // Round for round, so that the trail and the plain line see the same minutes of the machine.
  for (let i = 0; i < rounds; i++) {
    const audited = await round(true)
    const loop = await round(false)
    us.push(audited - loop)
    if (!fsync) plain.push(await plainRound() - loop)
  }
  const bytes = allocated()
  await trail.flush()
  const ratios = us.map((value, i) => value / plain[i]!)
  process.stdout.write(`audit${fsync ? ' (fsync)' : ''}: ${medianAndRange(us, ' us per call')}, ${bytes} bytes allocated; ${tree}\n`)
  if (!fsync) process.stdout.write(`plain line (its digest, text, hash and write alone): ${medianAndRange(plain, ' us per call')}; the trail over it round by round: ${medianAndRange(ratios, 'x')}\n`)
} finally {
  void kept
  closeSync(plainFd)
  await trail.close()
  rmSync(dir, { recursive: true, force: true })
}
