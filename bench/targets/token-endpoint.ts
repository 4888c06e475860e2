/**
 * The smallest OAuth token endpoint: any client credentials or token-exchange request gets a
 * token good for an hour. The credential bench's issuer; it counts what it issued (`GET /count`).
 */
import { createServer } from 'node:http'
import type { AddressInfo } from 'node:net'
import { announce } from './announce.js'

let issued = 0
const server = createServer((request, response) => {
  if (request.url === '/count') {
    response.end(String(issued))
    return
  }
  request.resume()
  request.on('end', () => {
    issued++
    response.writeHead(200, { 'content-type': 'application/json', 'cache-control': 'no-store' })
    response.end(JSON.stringify({ access_token: `bench-token-${issued}`, token_type: 'Bearer', expires_in: 3600 }))
  })
})
server.listen(0, '127.0.0.1', () => { announce((server.address() as AddressInfo).port) })
