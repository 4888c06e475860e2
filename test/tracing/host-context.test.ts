import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { context, trace } from '@opentelemetry/api'
import { AsyncLocalStorageContextManager } from '@opentelemetry/context-async-hooks'
import { z } from 'zod'
import type { FastifyInstance } from 'fastify'
import { buildApp } from '../../plugins/app.js'
import { defineTool } from '../../src/index.js'
import { loadConfig } from '../../src/services/config.js'
import { tracingFromEnv } from '../../src/services/tracing/setup.js'
import { API_KEYS, auth, KEYS } from '../http/helpers.js'
import { OtlpReceiver } from './otlp-receiver.js'

/*
 * A host that embeds the gateway with its own OpenTelemetry setup (its own context manager,
 * installed before the gateway is built) sees a call's span active in the tool's code without
 * TRACE_ACTIVE_SPAN: the gateway makes no context only where nothing could read it.
 * (A context manager is process-wide: this file has a process of its own.)
 */

const seen: Array<{ active?: string, given?: string }> = []
const probe = defineTool({
  id: 'probe', kind: 'read', description: 'Reports the active span and ctx.trace.', isReadOnly: true, isConcurrencySafe: true, authorize () {},
  inputSchema: z.object({}), outputSchema: z.null(),
  execute (_input, ctx) {
    seen.push({ active: trace.getActiveSpan()?.spanContext().spanId, given: ctx.trace?.traceparent })
    return null
  },
})

let receiver: OtlpReceiver
let app: FastifyInstance

beforeAll(async () => {
  context.setGlobalContextManager(new AsyncLocalStorageContextManager().enable())
  receiver = await OtlpReceiver.start()
  const tracing = await tracingFromEnv({ OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url, OTEL_EXPORTER_OTLP_PROTOCOL: 'http/json' })
  app = await buildApp({ config: loadConfig({}, { apiKeys: API_KEYS }), tools: [probe], tracing })
})

afterAll(async () => {
  await app.close()
  await receiver.close()
  context.disable()
})

describe('a host\'s own context manager', () => {
  it('runs the tool with its call\'s span active, without TRACE_ACTIVE_SPAN', async () => {
    const response = await app.inject({ method: 'POST', url: '/tools/probe', headers: auth(KEYS.admin), payload: {} })
    expect(response.statusCode).toBe(200)
    const { active, given } = seen.at(-1)!
    expect(active).toMatch(/^[0-9a-f]{16}$/)
    expect(given).toContain(`-${active}-`)
  })
})
