import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { trace } from '@opentelemetry/api'
import { request as httpRequest, Agent } from 'node:http'
import type { AddressInfo } from 'node:net'
import { z } from 'zod'
import type { FastifyInstance } from 'fastify'
import { buildApp } from '../../plugins/app.js'
import { defineTool } from '../../src/index.js'
import { ConfigError, loadConfig } from '../../src/services/config.js'
import { tracingFromEnv } from '../../src/services/tracing/setup.js'
import type { Tracing } from '../../src/services/tracing/types.js'
import { API_KEYS, auth, KEYS } from '../http/helpers.js'
import { OtlpReceiver } from './otlp-receiver.js'

/*
 * TRACE_ACTIVE_SPAN=true: a context manager is installed (process-wide, so this file has a
 * process of its own), and a tool's code sees its call's span as OpenTelemetry's active span.
 */

const seen: Array<{ active?: string, given?: string }> = []
const probe = defineTool({
  id: 'probe', kind: 'read', description: 'Reports the active span and ctx.trace.', isReadOnly: true, isConcurrencySafe: true, authorize () {},
  inputSchema: z.object({}), outputSchema: z.null(),
  async execute (_input, ctx) {
    // After an await too: the context follows the tool's own asynchronous code.
    await new Promise(resolve => setImmediate(resolve))
    seen.push({ active: trace.getActiveSpan()?.spanContext().spanId, given: ctx.trace?.traceparent })
    return null
  },
})

let receiver: OtlpReceiver
let tracing: Tracing
let app: FastifyInstance
let port: number

beforeAll(async () => {
  receiver = await OtlpReceiver.start()
  tracing = (await tracingFromEnv({
    OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url, OTEL_EXPORTER_OTLP_PROTOCOL: 'http/json',
    OTEL_TRACES_SAMPLER: 'parentbased_traceidratio', OTEL_TRACES_SAMPLER_ARG: '0', TRACE_ACTIVE_SPAN: 'true',
  }))!
  app = await buildApp({ config: loadConfig({}, { apiKeys: API_KEYS }), tools: [probe], tracing })
  await app.listen({ host: '127.0.0.1', port: 0 })
  port = (app.server.address() as AddressInfo).port
})

afterAll(async () => {
  await app.close()
  await receiver.close()
})

/** POST /tools/probe over a real socket of `agent`. */
async function post (agent: Agent, headers: Record<string, string> = {}): Promise<number> {
  return await new Promise((resolve, reject) => {
    const req = httpRequest({ host: '127.0.0.1', port, path: '/tools/probe', method: 'POST', agent, headers: { 'content-type': 'application/json', ...auth(KEYS.admin), ...headers } }, response => {
      response.resume()
      response.on('end', () => { resolve(response.statusCode ?? 0) })
    })
    req.on('error', reject)
    req.end('{}')
  })
}

describe('TRACE_ACTIVE_SPAN=true', () => {
  it('runs the tool with its call\'s span active, after awaits too', async () => {
    const agent = new Agent({ keepAlive: true, maxSockets: 1 })
    try {
      expect(await post(agent, { traceparent: '00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01' })).toBe(200)
    } finally {
      agent.destroy()
    }
    const { active, given } = seen.at(-1)!
    expect(active).toMatch(/^[0-9a-f]{16}$/)
    expect(given).toBe(`00-0af7651916cd43dd8448eb211c80319c-${active}-01`)
  })

  it('a value other than true or false stops start-up naming the setting', async () => {
    await expect(tracingFromEnv({ OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url, TRACE_ACTIVE_SPAN: 'yes' })).rejects.toThrow(ConfigError)
    await expect(tracingFromEnv({ OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url, TRACE_ACTIVE_SPAN: 'yes' })).rejects.toThrow(/TRACE_ACTIVE_SPAN/)
  })
})
