/** The physical limit: bare node:http, JSON.parse and a hand-written check, no framework. */
import { createServer, type ServerResponse } from 'node:http'
import type { AddressInfo } from 'node:net'
import { announce } from './announce.js'
import { ECHO_PATH, type EchoIn } from './echo.js'

function isEchoInput (value: unknown): value is EchoIn {
  if (typeof value !== 'object' || value === null) return false
  const text = (value as { text?: unknown }).text
  return typeof text === 'string' && text.length >= 1 && text.length <= 1000
}

function send (res: ServerResponse, status: number, body: string): void {
  res.writeHead(status, { 'content-type': 'application/json; charset=utf-8', 'content-length': Buffer.byteLength(body) })
  res.end(body)
}

const server = createServer((req, res) => {
  if (req.method !== 'POST' || req.url !== ECHO_PATH) return send(res, 404, '{"error":"not found"}')
  let body = ''
  req.setEncoding('utf8')
  req.on('data', (chunk: string) => { body += chunk })
  req.on('end', () => {
    let input: unknown
    try { input = JSON.parse(body) } catch { return send(res, 400, '{"error":"malformed JSON"}') }
    if (!isEchoInput(input)) return send(res, 400, '{"error":"invalid input"}')
    send(res, 200, JSON.stringify({ text: input.text, length: input.text.length }))
  })
})
server.listen(0, '127.0.0.1', () => { announce((server.address() as AddressInfo).port) })
