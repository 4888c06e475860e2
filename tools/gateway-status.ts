import { z } from 'zod'
import { defineTool } from 'toolgate'
import type { GatewayContext } from './lib/context.js'

/** `gateway_status`: facts about the serving gateway. Read-only: it only reads `ctx.app.gateway`. */
export default defineTool({
  id: 'gateway_status',
  kind: 'read',
  description: 'Report the gateway\'s version, how long it has been up, how many tools it serves and how many calls are in flight. Call it to check the service is healthy or to report its version.',
  shortDescription: 'Gateway version, uptime, tool count and calls in flight (no arguments).',
  inputSchema: z.object({}).strict(),
  outputSchema: z.object({
    version: z.string().describe('The gateway\'s version.'),
    startedAt: z.iso.datetime().describe('When the gateway started, ISO 8601 UTC.'),
    uptimeSeconds: z.number().int().min(0).describe('Whole seconds since the gateway started.'),
    toolCount: z.number().int().min(0).describe('Number of tools the gateway serves.'),
    inFlight: z.number().int().min(0).describe('Calls in flight right now, this one included.'),
  }),
  isReadOnly: true,
  isConcurrencySafe: true,
  timeoutMs: 1_000,
  authorize () {},
  execute (_input, ctx: GatewayContext) {
    const { gateway } = ctx.app
    return {
      version: gateway.version,
      startedAt: new Date(gateway.startedAt).toISOString(),
      uptimeSeconds: Math.max(0, Math.floor((Date.now() - gateway.startedAt) / 1000)),
      toolCount: gateway.toolIds().length,
      inFlight: gateway.inFlight(),
    }
  },
})
