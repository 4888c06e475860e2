import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { buildApp } from '../../plugins/app.js'
import { loadConfig } from '../../src/services/config.js'
import { tracingFromEnv } from '../../src/services/tracing/setup.js'
import { httpTools } from '../fixtures/http-tools.js'
import { API_KEYS, auth, KEYS } from '../http/helpers.js'
import { OtlpReceiver } from './otlp-receiver.js'

/*
 * What tracing adds to a request's response: nothing for one the sampler left out (its span has
 * nothing to end), one `close` listener for one it keeps. A response hook would make Fastify time
 * every response and listen to it, sampled or not.
 */

let receiver: OtlpReceiver
beforeAll(async () => { receiver = await OtlpReceiver.start() })
afterAll(async () => { await receiver.close() })

/** The `finish` and `close` listeners on a tool call's response as it is sent, with tracing per `sampler` (none: off). */
async function listenersWith (sampler: string | undefined): Promise<{ finish: number, close: number }> {
  const tracing = sampler === undefined ? undefined : await tracingFromEnv({ OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url, OTEL_TRACES_SAMPLER: sampler })
  // Log level warn: at info the gateway has a response hook of its own, for its request log lines.
  const app = await buildApp({ config: loadConfig({}, { apiKeys: API_KEYS, logLevel: 'warn' }), tools: httpTools, tracing })
  let seen = { finish: -1, close: -1 }
  app.addHook('onSend', (_request, reply, _payload, done) => {
    seen = { finish: reply.raw.listenerCount('finish'), close: reply.raw.listenerCount('close') }
    done()
  })
  try {
    const response = await app.inject({ method: 'POST', url: '/tools/echo', headers: auth(KEYS.admin), payload: { text: 'hi' } })
    expect(response.statusCode).toBe(200)
  } finally {
    await app.close()
  }
  return seen
}

describe('what tracing adds to a response', () => {
  it('nothing for a request the sampler left out; one close listener for one it keeps', async () => {
    const untraced = await listenersWith(undefined)
    expect(await listenersWith('always_off')).toEqual(untraced)
    expect(await listenersWith('always_on')).toEqual({ finish: untraced.finish, close: untraced.close + 1 })
  })
})
