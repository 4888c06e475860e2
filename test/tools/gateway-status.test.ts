import { describe, expect, it } from 'vitest'
import gatewayStatus from '../../tools/gateway-status.js'
import { expectFailure, fakeApp, harness } from './app.js'

describe('gateway_status', () => {
  it('reports version, uptime, tool count and calls in flight from ctx.app.gateway', async () => {
    const startedAt = Date.now() - 90_500
    const app = fakeApp({ gateway: { version: '1.2.3', startedAt, toolIds: () => ['a', 'b', 'c'], inFlight: () => 2 } })
    const { value } = await harness([gatewayStatus], app).call('gateway_status', {})
    expect(value).toEqual({ version: '1.2.3', startedAt: new Date(startedAt).toISOString(), uptimeSeconds: 90, toolCount: 3, inFlight: 2 })
  })

  it('takes no arguments', async () => {
    await expectFailure(harness([gatewayStatus]).call('gateway_status', { verbose: true }), 400, 'TOOLGATE_INVALID_INPUT')
  })

  it('runs in plan mode because it is read-only', async () => {
    const { record } = await harness([gatewayStatus]).call('gateway_status', {}, { bind: { mode: 'plan' } })
    expect(record.outcome).toBe('ok')
  })
})
