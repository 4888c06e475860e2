import { describe, expect, it } from 'vitest'
import { z } from 'zod'
import { settlesBefore } from '../on-time.js'
import { catalogOf, lastRecord, echoDeclaration, forever, rejectionOf, sleep, writeDeclaration, type LooseDeclaration } from './helpers.js'

// "Within" is by the event loop's clock (settlesBefore): before a timer of this many ms, started
// at the abort, fires. A busy machine delays that timer as it delays the call.
const SLACK_MS = 50
const ABORT_AFTER_MS = 30

const hanging = (overrides: LooseDeclaration = {}): LooseDeclaration =>
  writeDeclaration('hang', () => forever(), { timeoutMs: 10_000, ...overrides })

/** Abort `controller` after a delay: the call's error, and whether it settled within SLACK_MS of the abort. */
async function abortedAfter (call: Promise<unknown>, controller: AbortController) {
  await sleep(ABORT_AFTER_MS)
  controller.abort()
  const onTime = await settlesBefore(call, SLACK_MS)
  const error = await rejectionOf(call)
  return { error, onTime }
}

describe("the caller's abort", () => {
  it('ends a call through the bound execution.signal with TOOLGATE_CANCELLED (499) within 50 ms', async () => {
    const controller = new AbortController()
    const invoker = catalogOf([hanging()]).bind({ app: undefined, execution: { signal: controller.signal } })
    const { error, onTime } = await abortedAfter(invoker.invoke({ toolId: 'hang', input: {} }), controller)
    expect([error.code, error.status]).toEqual(['TOOLGATE_CANCELLED', 499])
    expect(onTime).toBe(true)
  })

  it('ends a call through the invoke signal within 50 ms', async () => {
    const controller = new AbortController()
    const invoker = catalogOf([hanging()]).bind({ app: undefined })
    const { error, onTime } = await abortedAfter(invoker.invoke({ toolId: 'hang', input: {}, signal: controller.signal }), controller)
    expect(error.code).toBe('TOOLGATE_CANCELLED')
    expect(onTime).toBe(true)
  })

  it('ends an interactive tool with an infinite timeout', async () => {
    const controller = new AbortController()
    const invoker = catalogOf([hanging({ timeoutMs: Infinity, interactive: true })]).bind({ app: undefined })
    const { error, onTime } = await abortedAfter(invoker.invoke({ toolId: 'hang', input: {}, signal: controller.signal }), controller)
    expect(error.code).toBe('TOOLGATE_CANCELLED')
    expect(onTime).toBe(true)
  })

  it("reports outcome 'unknown' when a non-read-only tool had begun", async () => {
    const controller = new AbortController()
    const invoker = catalogOf([hanging()]).bind({ app: undefined })
    const { error } = await abortedAfter(invoker.invoke({ toolId: 'hang', input: {}, signal: controller.signal }), controller)
    expect(error.extensions.outcome).toBe('unknown')
    expect(lastRecord()?.outcome).toBe('unknown')
  })

  it("reports outcome 'cancelled' for a read-only tool", async () => {
    const controller = new AbortController()
    const readOnly = echoDeclaration({ id: 'hang', inputSchema: z.object({}), execute: () => forever() })
    const invoker = catalogOf([readOnly]).bind({ app: undefined })
    await abortedAfter(invoker.invoke({ toolId: 'hang', input: {}, signal: controller.signal }), controller)
    expect(lastRecord()?.outcome).toBe('cancelled')
  })

  it('aborts ctx.signal when the caller aborts', async () => {
    const controller = new AbortController()
    let signal: AbortSignal | undefined
    const invoker = catalogOf([hanging({ execute: (_input: unknown, ctx: { signal: AbortSignal }) => { signal = ctx.signal; return forever() } })]).bind({ app: undefined })
    await abortedAfter(invoker.invoke({ toolId: 'hang', input: {}, signal: controller.signal }), controller)
    expect(signal?.aborted).toBe(true)
  })

  it('runs nothing when the signal was aborted before the call', async () => {
    let runs = 0
    const invoker = catalogOf([hanging({ execute: () => { runs++ } })]).bind({ app: undefined })
    const error = await rejectionOf(invoker.invoke({ toolId: 'hang', input: {}, signal: AbortSignal.abort() }))
    expect([error.code, runs]).toEqual(['TOOLGATE_CANCELLED', 0])
    expect(lastRecord()?.outcome).toBe('cancelled')
  })

  it('ends the call even when the abort fires synchronously inside execute', async () => {
    const controller = new AbortController()
    const execute = () => { controller.abort(); return forever() }
    const invoker = catalogOf([hanging({ execute, timeoutMs: 10_000 })]).bind({ app: undefined, execution: { signal: controller.signal } })
    const call = invoker.invoke({ toolId: 'hang', input: {} })
    expect(await settlesBefore(call, SLACK_MS)).toBe(true)
    const error = await rejectionOf(call)
    expect(error.code).toBe('TOOLGATE_CANCELLED')
  })
})

describe('catalog.shutdown(grace)', () => {
  it('refuses new calls with TOOLGATE_UNAVAILABLE (503)', async () => {
    const catalog = catalogOf([echoDeclaration()])
    await catalog.shutdown(0)
    const error = await rejectionOf(catalog.bind({ app: undefined }).invoke({ toolId: 'echo', input: { text: 'a' } }))
    expect([error.code, error.status]).toEqual(['TOOLGATE_UNAVAILABLE', 503])
  })

  it('aborts a call in flight once the grace is over, not before', async () => {
    const catalog = catalogOf([hanging()])
    const call = catalog.bind({ app: undefined }).invoke({ toolId: 'hang', input: {} })
    const settledAt = call.then(() => 0, () => performance.now())
    await sleep(10)
    const started = performance.now()
    const shutdown = catalog.shutdown(80)
    const onTime = settlesBefore(call, 80 + SLACK_MS)
    await shutdown
    const error = await rejectionOf(call)
    const elapsed = (await settledAt) - started
    expect(error.code).toBe('TOOLGATE_UNAVAILABLE')
    expect(elapsed).toBeGreaterThanOrEqual(78)
    expect(await onTime).toBe(true)
  })

  it('lets a call that finishes within the grace return its value', async () => {
    const catalog = catalogOf([writeDeclaration('slow', async () => { await sleep(30); return 'done' })])
    const call = catalog.bind({ app: undefined }).invoke({ toolId: 'slow', input: {} })
    await sleep(5)
    await catalog.shutdown(1_000)
    await expect(call).resolves.toMatchObject({ value: 'done' })
  })

  it('resolves at once when nothing is in flight', async () => {
    expect(await settlesBefore(catalogOf([echoDeclaration()]).shutdown(5_000), SLACK_MS)).toBe(true)
  })
})

describe('ctx.onAbort', () => {
  it('runs once with the abort reason, as the signal would, and the function it returns stops it', async () => {
    const heard: string[] = []
    const declaration = writeDeclaration('listen', (_input: never, ctx: never) => {
      const { onAbort } = ctx as { onAbort: (listener: (reason: Error) => void) => () => void }
      onAbort(reason => { heard.push(`kept: ${reason.name}`) })
      const stop = onAbort(reason => { heard.push(`stopped: ${reason.name}`) })
      stop()
      return forever()
    }, { timeoutMs: 30 })
    const error = await rejectionOf(catalogOf([declaration]).bind({ app: undefined }).invoke({ toolId: 'listen', input: {} }))
    expect(error.code).toBe('TOOLGATE_TIMEOUT')
    expect(heard).toEqual(['kept: TimeoutError'])
  })

  it('runs at once when the call is aborted already', async () => {
    const heard: string[] = []
    const controller = new AbortController()
    const declaration = writeDeclaration('late', async (_input: never, ctx: never) => {
      controller.abort()
      await sleep(5)
      ;(ctx as { onAbort: (listener: (reason: Error) => void) => () => void }).onAbort(reason => { heard.push(reason.name) })
      return await forever()
    })
    await rejectionOf(catalogOf([declaration]).bind({ app: undefined }).invoke({ toolId: 'late', input: {}, signal: controller.signal }))
    // The call ended at the abort; the tool goes on a moment longer.
    await sleep(30)
    expect(heard).toEqual(['AbortError'])
  })
})
