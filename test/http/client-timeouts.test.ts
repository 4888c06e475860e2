import { connect } from 'node:net'
import { once } from 'node:events'
import { describe, expect, it } from 'vitest'
import { auth, KEYS, testApp } from './helpers.js'
import { listening, rawRequest } from './raw-http.js'

const stalledBody = [
  'POST /tools/echo HTTP/1.1', 'Host: 127.0.0.1', `X-Api-Key: ${KEYS.admin}`, 'Content-Type: application/json', 'Content-Length: 100', '', '{"text":',
].join('\r\n')

describe('clients that stall', () => {
  it('a stalled body answers 408 problem+json and closes, while other callers are served', async () => {
    const app = await testApp({ requestTimeoutMs: 400, headersTimeoutMs: 300 })
    const port = await listening(app)
    const started = performance.now()
    let stalledAnswered = false
    const stalled = rawRequest(port, stalledBody, 5_000).then(response => { stalledAnswered = true; return response })
    // Served in full while the stalled request waits for its body.
    const other = await fetch(`http://127.0.0.1:${port}/tools/echo`, { method: 'POST', headers: { ...auth(KEYS.admin), 'content-type': 'application/json' }, body: '{"text":"hi"}' })
    expect(other.status).toBe(200)
    expect(stalledAnswered).toBe(false)
    const response = await stalled
    expect(response.status).toBe(408)
    expect(response.headers).toMatch(/content-type: application\/problem\+json/i)
    expect(JSON.parse(response.body)).toMatchObject({ status: 408, code: 'TOOLGATE_REQUEST_TIMEOUT', type: 'urn:toolgate:error:TOOLGATE_REQUEST_TIMEOUT' })
    // On time: the timeout plus Node's checking interval (a quarter of the shortest timeout), with slack for a loaded machine.
    expect(performance.now() - started).toBeLessThan(3_000)
  })

  it('stalled headers answer 408 problem+json', async () => {
    const port = await listening(await testApp({ requestTimeoutMs: 2_000, headersTimeoutMs: 300 }))
    const started = performance.now()
    const response = await rawRequest(port, 'GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Slow: ', 5_000)
    expect(response.status).toBe(408)
    expect(JSON.parse(response.body)).toMatchObject({ status: 408, code: 'TOOLGATE_REQUEST_TIMEOUT' })
    expect(performance.now() - started).toBeLessThan(1_900)
  })

  it('headers over the size limit answer 431 problem+json', async () => {
    const port = await listening(await testApp())
    const response = await rawRequest(port, `GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Big: ${'a'.repeat(20_000)}\r\n\r\n`)
    expect(response.status).toBe(431)
    expect(JSON.parse(response.body)).toMatchObject({ status: 431, code: 'TOOLGATE_HEADERS_TOO_LARGE' })
  })

  it('bytes that are not HTTP answer 400 problem+json', async () => {
    const port = await listening(await testApp())
    const response = await rawRequest(port, 'NOT HTTP AT ALL\r\n\r\n')
    expect(response.status).toBe(400)
    expect(JSON.parse(response.body)).toMatchObject({ status: 400, code: 'TOOLGATE_MALFORMED_REQUEST' })
  })

  it('a connection that never sends a request is closed after the headers timeout', async () => {
    const app = await testApp({ requestTimeoutMs: 2_000, headersTimeoutMs: 200 })
    try {
      // Read, so that the server's hanging up is seen.
      const socket = connect(await listening(app), '127.0.0.1').resume()
      const started = performance.now()
      await once(socket, 'close')
      const waited = performance.now() - started
      expect(waited).toBeGreaterThanOrEqual(150)
      expect(waited).toBeLessThan(3_000)
    } finally {
      await app.close()
    }
  })

  it('closing the app does not wait for a connection that never sent a request', async () => {
    const app = await testApp()
    const socket = connect(await listening(app), '127.0.0.1').resume()
    await once(socket, 'connect')
    const closed = once(socket, 'close')
    const started = performance.now()
    await app.close()
    await closed
    // Without the hook, close waits for the client to hang up or the headers timeout (10 s here) to pass.
    expect(performance.now() - started).toBeLessThan(1_000)
  })
})
