import { describe, expect, it } from 'vitest'
import type { CatalogOptions } from '../../src/core/catalog.js'
import { settlesBefore } from '../on-time.js'
import { catalogOf, lastRecord, deferred, echoDeclaration, Overlap, rejectionOf, sleep, writeDeclaration, type LooseDeclaration } from './helpers.js'

const SLACK_MS = 50

/** A tool that holds its slot for a moment and counts how many of its calls overlap. */
function overlapping (id: string, overlap: Overlap, overrides: LooseDeclaration = {}): LooseDeclaration {
  return writeDeclaration(id, async () => { overlap.enter(); await sleep(15); overlap.leave(); return id }, overrides)
}

/** Start `count` calls of `toolId` at once and wait for all of them. */
async function burst (invoke: (toolId: string) => Promise<unknown>, toolId: string, count: number): Promise<void> {
  await Promise.all(Array.from({ length: count }, () => invoke(toolId)))
}

describe('concurrency through the pipeline', () => {
  it('reads a selfConcurrency getter at every call', async () => {
    let limit = 1
    const overlap = new Overlap()
    const declaration = overlapping('grouped', overlap)
    Object.defineProperty(declaration, 'selfConcurrency', { get: () => limit, enumerable: true })
    const invoker = catalogOf([declaration]).bind({ app: undefined })
    const invoke = (toolId: string) => invoker.invoke({ toolId, input: {} })
    await burst(invoke, 'grouped', 3)
    expect(overlap.max).toBe(1)
    limit = 3
    await burst(invoke, 'grouped', 3)
    expect(overlap.max).toBe(3)
  })

  it('reads a selfConcurrency function at every call', async () => {
    let limit = 2
    const overlap = new Overlap()
    const invoker = catalogOf([overlapping('grouped', overlap, { selfConcurrency: () => limit })]).bind({ app: undefined })
    await burst(toolId => invoker.invoke({ toolId, input: {} }), 'grouped', 4)
    expect(overlap.max).toBe(2)
    limit = 1
    overlap.max = 0
    await burst(toolId => invoker.invoke({ toolId, input: {} }), 'grouped', 3)
    expect(overlap.max).toBe(1)
  })

  it('overlaps read-only concurrency-safe calls', async () => {
    const overlap = new Overlap()
    const reader = echoDeclaration({ execute: async (input: unknown) => { overlap.enter(); await sleep(15); overlap.leave(); return input } })
    const invoker = catalogOf([reader]).bind({ app: undefined })
    await Promise.all([1, 2, 3].map(() => invoker.invoke({ toolId: 'echo', input: { text: 'a' } })))
    expect(overlap.max).toBe(3)
  })

  it('runs a write tool alone in its domain but beside calls of another domain', async () => {
    const overlap = new Overlap()
    const catalog = catalogOf([overlapping('write', overlap)])
    const inDomain = (domain: string) => catalog.bind({ app: undefined, domain }).invoke({ toolId: 'write', input: {} })
    await Promise.all([inDomain('a'), inDomain('a')])
    expect(overlap.max).toBe(1)
    await Promise.all([inDomain('a'), inDomain('b')])
    expect(overlap.max).toBe(2)
  })
})

describe('waiting for a slot', () => {
  /** A catalog whose `hold` tool keeps its slot until the test lets go, and a counted `next` tool. */
  function blocked (options: CatalogOptions = {}) {
    const gate = deferred()
    const counts = { next: 0 }
    const catalog = catalogOf([
      writeDeclaration('hold', () => gate.promise.then(() => 'held')),
      writeDeclaration('next', () => { counts.next++; return 'next' }),
    ], options)
    const invoker = catalog.bind({ app: undefined })
    const holding = invoker.invoke({ toolId: 'hold', input: {} })
    return { catalog, invoker, counts, holding, release: gate.resolve }
  }

  it('takes a queued call whose caller aborts out of the queue, with TOOLGATE_CANCELLED, and never runs it', async () => {
    const { catalog, invoker, counts, holding, release } = blocked()
    const controller = new AbortController()
    const queued = invoker.invoke({ toolId: 'next', input: {}, signal: controller.signal })
    await sleep(10)
    expect(catalog.scheduler.queueLength('default')).toBe(1)
    controller.abort()
    const error = await rejectionOf(queued)
    expect([error.code, error.status, lastRecord()?.outcome, lastRecord()?.executed]).toEqual(['TOOLGATE_CANCELLED', 499, 'cancelled', false])
    expect(catalog.scheduler.queueLength('default')).toBe(0)
    release()
    await holding
    await sleep(10)
    expect(counts.next).toBe(0)
  })

  it('refuses a call beyond the queue bound with TOOLGATE_QUEUE_FULL (429) and a retryAfter', async () => {
    const { invoker, counts, holding, release } = blocked({ core: { maxQueuePerDomain: 1 } })
    const queued = invoker.invoke({ toolId: 'next', input: {} })
    const error = await rejectionOf(invoker.invoke({ toolId: 'next', input: {} }))
    expect([error.code, error.status]).toEqual(['TOOLGATE_QUEUE_FULL', 429])
    expect(error.extensions.retryAfter).toEqual(expect.any(Number))
    release()
    await Promise.all([holding, queued])
    expect(counts.next).toBe(1)
  })

  it('gives up a wait longer than queueTimeoutMs with TOOLGATE_QUEUE_TIMEOUT (503), on time', async () => {
    const { invoker, counts, holding, release } = blocked({ core: { queueTimeoutMs: 60 } })
    const started = performance.now()
    const call = invoker.invoke({ toolId: 'next', input: {} })
    // Not before the wait (wall clock), nor much after it (by the event loop's clock: a busy machine delays both timers alike).
    expect(await settlesBefore(call, 60 + SLACK_MS)).toBe(true)
    const error = await rejectionOf(call)
    const elapsed = performance.now() - started
    expect([error.code, error.status]).toEqual(['TOOLGATE_QUEUE_TIMEOUT', 503])
    expect(error.extensions.retryAfter).toEqual(expect.any(Number))
    expect(elapsed).toBeGreaterThanOrEqual(58)
    release()
    await holding
    expect(counts.next).toBe(0)
  })

  it('runs a queued call once the slot frees', async () => {
    const { invoker, counts, holding, release } = blocked()
    const queued = invoker.invoke({ toolId: 'next', input: {} })
    await sleep(10)
    expect(counts.next).toBe(0)
    release()
    await expect(queued).resolves.toMatchObject({ value: 'next' })
    await holding
    expect(counts.next).toBe(1)
  })
})
