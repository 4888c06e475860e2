/**
 * What tracing costs a call on its own, without HTTP: the server span and the call span of one
 * REST call opened, given the attributes the gateway gives them, ended, and exported (the batch
 * processor's work, the protobuf, the POST to a receiver in another process), in one process,
 * CPU time per call. Far steadier than a req/s ratio on a 2-core machine, where the kernel's
 * socket work moves with every other process: use it to compare a change, and the features
 * bench for what a user sees.
 *
 *   npm run bench:tracing -- [--calls 20000] [--rounds 9] [--tree DIR] [--against DIR] [--no-floor] [--protocol http/json] [--between KIB] [SAMPLER[=ARG] ...]
 *
 * (Run with the loader the bench's servers run with, `runtime/register.mjs`: under tsx, whose
 * keepNames wraps every closure made in a `__name()` call, a call measured 1 to 3 us more.)
 *
 * Samplers default to always_on, parentbased_traceidratio=0.1 and always_off (every span left
 * out: the cost of the ids and contexts alone). Beside the CPU time, the heap bytes a call allocates,
 * which moves far less than CPU time (a few per cent between runs). `--tree` measures another checkout's code (its
 * own node_modules), for a before and after; `--against` measures another checkout beside this
 * one in the same process, round for round (the machine's speed moves between runs by more than
 * most changes: compare this way), with its ratio paired by round; each sampler is also measured
 * beside the same spans written by hand, the floor (`--no-floor`: not); `--protocol` the OTLP encoding (default http/protobuf);
 * `--between` other work between calls, as a request's (KiB of memory touched; its own time, measured
 * in a round beside, taken off: past about 64 KiB its own variation swamps the difference).
 */
import { existsSync } from 'node:fs'
import { resolve } from 'node:path'
import { getHeapStatistics } from 'node:v8'
import { startOtlpSink } from './lib/otlp-sink.js'
import { takeFlag } from './lib/args.js'
import { medianAndRange } from './lib/stats.js'
import { HandTracer, nowMs } from './targets/spans-by-hand.js'

const args = process.argv.slice(2)
const calls = Number(takeFlag(args, 'calls', '20000'))
const rounds = Number(takeFlag(args, 'rounds', '9'))
const tree = resolve(takeFlag(args, 'tree', '.'))
const protocol = takeFlag(args, 'protocol', 'http/protobuf')
const betweenKiB = Number(takeFlag(args, 'between', '0'))
const floor = !args.includes('--no-floor')
if (!floor) args.splice(args.indexOf('--no-floor'), 1)
const againstDir = takeFlag(args, 'against', '')
const against = againstDir === '' ? undefined : resolve(againstDir)
const samplers = args.length > 0 ? args : ['always_on', 'parentbased_traceidratio=0.1', 'always_off']

/**
 * Other work between calls, as a request's own work comes between its spans: `betweenKiB` of a
 * memory larger than the caches read and written, scattered. Code and data the tracing path
 * needs are then no longer cached, as over HTTP; its time is measured alone and taken off.
 */
const memory = new Uint32Array(8 * 1024 * 1024)
let touched = 0
function otherWork (): void {
  for (let i = 0, at = touched; i < betweenKiB * 16; i++) {
    at = (at + 16411) % memory.length
    memory[at]!++
    touched = at
  }
}

/**
 * Heap bytes one call allocates, its share of the batch processor's work included (the export
 * itself is asynchronous and not): the heap's growth over rounds of calls made without a pause,
 * the median of the rounds no collection ran in. It moves far less than CPU time (the machine's speed is not in it),
 * and what a call allocates, every request pays again in collections.
 */
function allocated (call: () => void): number {
  const grown: number[] = []
  for (let i = 0; i < 15; i++) {
    const before = getHeapStatistics().used_heap_size
    for (let j = 0; j < 500; j++) call()
    const growth = getHeapStatistics().used_heap_size - before
    if (growth > 0) grown.push(growth / 500)
  }
  grown.sort((a, b) => a - b)
  return Math.round(grown[Math.floor(grown.length / 2)] ?? Number.NaN)
}

const sink = await startOtlpSink()
const headers: Record<string, string> = { host: '127.0.0.1:3000', 'content-type': 'application/json', 'x-api-key': 'bench', 'content-length': '40' }
let n = 0

/** One way of tracing the call, measured round for round beside the others. */
interface Subject {
  readonly label: string
  readonly call: () => void
  readonly flush: () => Promise<void>
  readonly shutdown: () => Promise<void>
}

/** A checkout's tracing at this sampler, as the REST face opens, ends and exports a call's two spans. */
async function toolgate (dir: string, spec: string, label: string): Promise<Subject> {
  const { tracingFromEnv } = await import(`${dir}/src/services/tracing/setup.ts`)
  // A checkout from before plugins/ had rooms keeps it at the top.
  const { callTracer } = await import(existsSync(`${dir}/plugins/observability/tracing.ts`) ? `${dir}/plugins/observability/tracing.ts` : `${dir}/plugins/tracing.ts`)
  const { ServerSpan } = await import(`${dir}/src/services/tracing/server-span.ts`)
  const { echoTool } = await import(`${dir}/bench/targets/toolgate-tools.ts`)
  const [sampler, arg] = spec.split('=')
  const tracing = await tracingFromEnv({ OTEL_EXPORTER_OTLP_ENDPOINT: sink, OTEL_EXPORTER_OTLP_PROTOCOL: protocol, OTEL_SERVICE_NAME: 'bench', OTEL_TRACES_SAMPLER: sampler, ...(arg === undefined ? {} : { OTEL_TRACES_SAMPLER_ARG: arg }) })
  const open = callTracer(tracing)
  const call = (): void => {
    const request = { method: 'POST', url: '/tools/echo', headers, routeOptions: { url: '/tools/:id' }, protocol: 'http', raw: { httpVersion: '1.1' }, serverSpan: undefined as unknown as { end: (status: number) => void } }
    request.serverSpan = new ServerSpan(tracing.tracer, { method: 'POST', path: '/tools/echo', headers, details: () => ({ route: request.routeOptions.url, scheme: 'http', httpVersion: '1.1' }) })
    const span = open(echoTool, request)
    // What the pipeline reads of every call's span: its W3C headers (ctx.trace, the record's trace).
    if (span.headers.traceparent.length !== 55) throw new Error('no traceparent')
    span.end({ callId: `call-${n++}-0123456789abcdef`, outcome: 'ok', status: 200, executed: true, queueMs: 0, executeMs: 0.012, dryRun: false, escalated: false, mutatedResources: [] })
    request.serverSpan.end(200)
  }
  // An older tree's Tracing has its provider instead.
  const flush = async (): Promise<void> => { await (tracing.forceFlush?.() ?? tracing.provider.forceFlush()) }
  return { label, call, flush, shutdown: async () => { await tracing.shutdown() } }
}

/**
 * The same two spans written by hand at the same ratio (bench/targets/spans-by-hand.ts): the
 * work any tracer of them does, without span objects, maps, contexts or limits.
 */
function byHand (spec: string): Subject {
  const [sampler, arg] = spec.split('=')
  const hand = new HandTracer(sink, sampler === 'always_on' ? 1 : sampler === 'always_off' ? 0 : Number(arg ?? 1))
  const call = (): void => {
    const span = hand.open(headers.traceparent)
    if (span === undefined) return
    hand.endCall(span, nowMs(), `call-${n++}-0123456789abcdef`, 0.012)
    hand.endServer(span, 'POST', '/tools/echo', 200)
  }
  return { label: '  by hand (the floor)', call, flush: async () => { hand.flush() }, shutdown: async () => {} }
}

for (const spec of samplers) {
  const subjects = [await toolgate(tree, spec, spec)]
  if (against !== undefined) subjects.push(await toolgate(against, spec, `  ${against}`))
  if (floor) subjects.push(byHand(spec))
  await measure(subjects)
  for (const subject of subjects) await subject.shutdown()
}

/**
 * Rounds of each subject in turn, so that all see the same minutes of the machine; each one's
 * median, and each later one's ratio to the first, paired round by round.
 */
async function measure (subjects: readonly Subject[]): Promise<void> {
  const round = async ({ call, flush }: Subject, traced = true): Promise<number> => {
    const before = process.cpuUsage()
    for (let i = 0; i < calls; i++) {
      if (betweenKiB > 0) otherWork()
      if (traced) call()
      // The exporter's batches go out between calls, as they would between requests.
      if (i % 64 === 63) await new Promise(resolve => setImmediate(resolve))
    }
    await flush()
    const used = process.cpuUsage(before)
    return (used.user + used.system) / calls
  }
  for (let i = 0; i < 3; i++) for (const subject of subjects) await round(subject)
  const us = subjects.map((): number[] => [])
  for (let i = 0; i < rounds; i++) {
    for (const [at, subject] of subjects.entries()) {
      // With other work between calls, each round is measured beside one of the work alone.
      us[at]!.push(betweenKiB > 0 ? -await round(subject, false) + await round(subject) : await round(subject))
    }
  }
  for (const [at, subject] of subjects.entries()) {
    const paired = at === 0 ? '' : `; x ${subjects[0]!.label.trim()} round by round: ${medianAndRange(us[at]!.map((value, i) => value / us[0]![i]!), 'x')}`
    process.stdout.write(`${subject.label.padEnd(30)} ${medianAndRange(us[at]!, ' us per call')}, ${allocated(subject.call)} bytes allocated${paired}\n`)
  }
}
