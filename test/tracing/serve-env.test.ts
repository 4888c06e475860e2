import { spawn } from 'node:child_process'
import { fileURLToPath } from 'node:url'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { SLOW } from '../slow.js'
import { OtlpReceiver } from './otlp-receiver.js'

// The compiled server entry, as `npm start` runs it (`npm test` builds first).
const root = fileURLToPath(new URL('../..', import.meta.url))

let receiver: OtlpReceiver
beforeAll(async () => { receiver = await OtlpReceiver.start() })
afterAll(async () => { await receiver.close() })

/** Start `toolgate serve` with `env`, make one traced call, stop it with SIGTERM. */
function serveOnce (env: Record<string, string>): Promise<{ code: number | null, status: number, stdout: string }> {
  // Without Redis even where the environment names one: nothing here is shared with other runs.
  const child = spawn(process.execPath, ['dist/bin/toolgate.js', 'serve'], { cwd: root, env: { ...process.env, PORT: '0', LOG_LEVEL: 'info', REDIS_URL: '', ...env } })
  let stdout = ''
  let status = 0
  let called = false
  child.stderr.on('data', chunk => { stdout += String(chunk) })
  child.stdout.on('data', chunk => {
    stdout += String(chunk)
    const match = /"address":"(http:\/\/[^"]+)"/.exec(stdout)
    if (match === null || called) return
    called = true
    void fetch(`${match[1]!}/tools/time_now`, {
      method: 'POST', headers: { 'content-type': 'application/json', traceparent: '00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01' }, body: '{}',
    }).then(r => { status = r.status }).finally(() => child.kill('SIGTERM'))
  })
  return new Promise(resolve => child.on('exit', code => { resolve({ code, status, stdout }) }))
}

describe('toolgate serve and the OpenTelemetry environment', () => {
  it('exports the call\'s spans over OTLP/HTTP JSON, flushed at shutdown, with the service name given', async () => {
    const run = await serveOnce({ OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url, OTEL_EXPORTER_OTLP_PROTOCOL: 'http/json', OTEL_SERVICE_NAME: 'gateway-e2e' })
    expect(run.status).toBe(200)
    expect(run.code).toBe(0)
    const span = receiver.named('execute_tool time_now')[0]
    expect(span).toMatchObject({ traceId: '4bf92f3577b34da6a3ce929d0e0e4736', service: 'gateway-e2e', attributes: expect.objectContaining({ 'gen_ai.tool.name': 'time_now' }) })
    const http = receiver.named('POST /tools/time_now')[0]
    expect(http).toMatchObject({ parentSpanId: '00f067aa0ba902b7' })
    expect(span!.parentSpanId).toBe(http!.spanId)
    expect(receiver.contentTypes.every(type => type.startsWith('application/json'))).toBe(true)
    // The log line of the call carries the same trace.
    expect(run.stdout).toMatch(/"trace_id":"4bf92f3577b34da6a3ce929d0e0e4736".*"msg":"tool call"/)
  }, SLOW.PROCESS_MS)

  it('speaks OTLP/HTTP protobuf when no protocol is named (the specification\'s default)', async () => {
    const before = receiver.contentTypes.length
    const spansBefore = receiver.spans.length
    const run = await serveOnce({ OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url, OTEL_SERVICE_NAME: 'gateway-proto' })
    expect(run.status).toBe(200)
    expect(run.code).toBe(0)
    expect(receiver.contentTypes.slice(before)).toContain('application/x-protobuf')
    // The same spans as over JSON, read from the protobuf by the receiver's own reader.
    const fresh = receiver.spans.slice(spansBefore)
    const span = fresh.find(s => s.name === 'execute_tool time_now')
    const http = fresh.find(s => s.name === 'POST /tools/time_now')
    expect(span).toMatchObject({ traceId: '4bf92f3577b34da6a3ce929d0e0e4736', kind: 1, service: 'gateway-proto', attributes: expect.objectContaining({ 'gen_ai.tool.name': 'time_now', 'toolgate.executed': true, 'toolgate.status': 200 }) })
    expect(http).toMatchObject({ parentSpanId: '00f067aa0ba902b7', kind: 2, attributes: expect.objectContaining({ 'http.response.status_code': 200, 'http.request.method': 'POST' }) })
    expect(span!.parentSpanId).toBe(http!.spanId)
    expect(typeof span!.attributes['toolgate.execute_ms']).toBe('number')
  }, SLOW.PROCESS_MS)

  it('exports nothing without an endpoint', async () => {
    const before = receiver.spans.length
    const run = await serveOnce({ OTEL_SERVICE_NAME: 'gateway-e2e' })
    expect(run.status).toBe(200)
    expect(run.code).toBe(0)
    expect(receiver.spans.length).toBe(before)
    expect(run.stdout).not.toContain('trace_id')
  }, SLOW.PROCESS_MS)
})
