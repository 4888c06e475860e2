import { describe, expect, it } from 'vitest'
import { z } from 'zod'
import { settlesBefore } from '../on-time.js'
import { catalogOf, lastRecord, echoDeclaration, forever, rejectionOf, writeDeclaration, type LooseDeclaration } from './helpers.js'

// Real timers throughout: a timeout fires no earlier than promised (wall clock), and no later
// than this much after it, by the event loop's clock (settlesBefore), which a busy machine
// delays alike for the timeout and for the check.
const SLACK_MS = 50
const TIMEOUT_MS = 100

/**
 * Invoke `toolId`: its error, how long it took to settle, and whether it settled before a
 * timer of `dueMs` started with it.
 */
async function timed (declarations: LooseDeclaration[], toolId: string, core?: { defaultTimeoutMs: number }, dueMs = TIMEOUT_MS + SLACK_MS) {
  const invoker = catalogOf(declarations, core === undefined ? {} : { core }).bind({ app: undefined })
  const started = performance.now()
  const settled = rejectionOf(invoker.invoke({ toolId, input: {} })).then(error => ({ error, elapsed: performance.now() - started }))
  const onTime = await settlesBefore(settled, dueMs)
  return { ...await settled, onTime }
}

const hangingWrite = (overrides: LooseDeclaration = {}): LooseDeclaration =>
  writeDeclaration('hang', () => forever(), { timeoutMs: TIMEOUT_MS, ...overrides })

const hangingRead = (overrides: LooseDeclaration = {}): LooseDeclaration =>
  echoDeclaration({ id: 'hang', inputSchema: z.object({}), outputSchema: z.unknown(), execute: () => forever(), timeoutMs: TIMEOUT_MS, ...overrides })

describe('a tool that ignores its signal and never resolves', () => {
  it('fails with TOOLGATE_TIMEOUT (504) within timeoutMs + 50 ms', async () => {
    const { error, onTime } = await timed([hangingWrite()], 'hang')
    expect([error.code, error.status]).toEqual(['TOOLGATE_TIMEOUT', 504])
    expect(onTime).toBe(true)
  })

  it('does not time out before timeoutMs', async () => {
    const { elapsed } = await timed([hangingWrite()], 'hang')
    expect(elapsed).toBeGreaterThanOrEqual(TIMEOUT_MS - 2)
  })

  it("reports outcome 'unknown' for a tool that is not read-only", async () => {
    const { error } = await timed([hangingWrite()], 'hang')
    expect(error.extensions.outcome).toBe('unknown')
    expect(lastRecord()?.outcome).toBe('unknown')
    expect(error.message).toMatch(/may or may not have taken effect/)
  })

  it("reports outcome 'timeout' for a read-only tool", async () => {
    const { error } = await timed([hangingRead()], 'hang')
    expect(error.code).toBe('TOOLGATE_TIMEOUT')
    expect(error.extensions.outcome).toBeUndefined()
    expect(lastRecord()?.outcome).toBe('timeout')
  })

  it('aborts ctx.signal with a timeout reason', async () => {
    let signal: AbortSignal | undefined
    await timed([hangingWrite({ execute: (_input: unknown, ctx: { signal: AbortSignal }) => { signal = ctx.signal; return forever() } })], 'hang')
    expect(signal?.aborted).toBe(true)
    expect((signal?.reason as Error).name).toBe('TimeoutError')
  })

  it('takes its timeout from core.defaultTimeoutMs when it declares none', async () => {
    const { error, elapsed, onTime } = await timed([hangingWrite({ timeoutMs: undefined })], 'hang', { defaultTimeoutMs: 80 }, 80 + SLACK_MS)
    expect(error.code).toBe('TOOLGATE_TIMEOUT')
    expect(elapsed).toBeGreaterThanOrEqual(78)
    expect(onTime).toBe(true)
  })

  it('prefers its own timeoutMs over the default', async () => {
    const { onTime } = await timed([hangingWrite({ timeoutMs: 60 })], 'hang', { defaultTimeoutMs: 2_000 }, 60 + SLACK_MS)
    expect(onTime).toBe(true)
  })

  it('frees its slot once the abandon grace is over, so the domain is not blocked forever', async () => {
    const catalog = catalogOf([hangingWrite({ timeoutMs: 30 }), writeDeclaration('next', () => 'ran')], { core: { abandonGraceMs: 30 } })
    const invoker = catalog.bind({ app: undefined })
    await rejectionOf(invoker.invoke({ toolId: 'hang', input: {} }))
    await expect(invoker.invoke({ toolId: 'next', input: {} })).resolves.toMatchObject({ value: 'ran' })
  })
})

describe('a tool that honours its signal', () => {
  it('still reports the timeout, not its own AbortError', async () => {
    const execute = (_input: unknown, ctx: { signal: AbortSignal }) => new Promise((_resolve, reject) => {
      ctx.signal.addEventListener('abort', () => { reject(new Error('aborted')) })
    })
    const { error } = await timed([hangingWrite({ execute })], 'hang')
    expect(error.code).toBe('TOOLGATE_TIMEOUT')
  })

  it('returns its value when it finishes before the timeout', async () => {
    const invoker = catalogOf([writeDeclaration('quick', async () => 'done', { timeoutMs: TIMEOUT_MS })]).bind({ app: undefined })
    await expect(invoker.invoke({ toolId: 'quick', input: {} })).resolves.toMatchObject({ value: 'done' })
  })
})
