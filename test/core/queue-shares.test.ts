import { describe, expect, it } from 'vitest'
import { z } from 'zod'
import { defineToolCatalog } from '../../src/index.js'

/** One slow tool whose calls wait until released, with a shared queue of 8 (toolLimits). */
function gatedTool () {
  const gates: Array<() => void> = []
  const catalog = defineToolCatalog([{
    id: 'export', kind: 'read', description: 'A slow export.', isReadOnly: false, isConcurrencySafe: true,
    inputSchema: z.object({}), outputSchema: z.null(), authorize () {},
    execute: async () => { await new Promise<void>(resolve => gates.push(resolve)); return null },
  }], { core: { toolLimits: { export: { maxInFlight: 1, maxQueue: 8 } } } })
  let session = 0
  const call = (principal: string) => catalog.bind({ app: undefined, idempotencyScope: principal, domain: `${principal}-${session++}` }).invoke({ toolId: 'export', input: {} })
  return { call, gates, catalog }
}

describe('a tool\'s queue is shared fairly between principals (toolLimits.maxQueue)', () => {
  it('one principal queues at most a quarter of it; another still queues and runs', async () => {
    const { call, gates, catalog } = gatedTool()
    const running = call('flood')
    const queued = [call('flood'), call('flood')]
    await expect(call('flood')).rejects.toMatchObject({ code: 'TOOLGATE_QUEUE_FULL', status: 429 })
    const other = call('other')
    // Let every waiting call through, one at a time.
    for (let done = 0; done < 4; done++) {
      await new Promise(resolve => setTimeout(resolve, 10))
      gates.shift()?.()
    }
    await expect(Promise.all([running, ...queued, other])).resolves.toHaveLength(4)
    await catalog.shutdown(0)
  })

  it('once many principals fill most of it, the last eighth is for principals with nothing waiting', async () => {
    const { call, gates, catalog } = gatedTool()
    const calls = [call('holder')]
    // Seven principals with one waiting call each: 7 of 8, the reserve (1) left.
    for (let i = 0; i < 7; i++) calls.push(call(`p${i}`))
    await expect(call('p0')).rejects.toMatchObject({ code: 'TOOLGATE_QUEUE_FULL' })
    calls.push(call('newcomer'))
    await expect(call('another')).rejects.toMatchObject({ code: 'TOOLGATE_QUEUE_FULL' })
    for (let done = 0; done < calls.length; done++) {
      await new Promise(resolve => setTimeout(resolve, 5))
      gates.shift()?.()
    }
    await expect(Promise.all(calls)).resolves.toHaveLength(9)
    await catalog.shutdown(0)
  })
})
