/**
 * One local JSON endpoint, `GET` (or any method) `/items/{id}`, and the OpenAPI document that
 * describes it: what the HTTP-upstream bench calls directly, through a bare reverse proxy and
 * through toolgate. Plain node:http, so the endpoint itself costs as little as it can.
 */
import { createServer } from 'node:http'
import type { AddressInfo } from 'node:net'
import { announce } from './announce.js'

export const ITEM_DOCUMENT = {
  openapi: '3.1.0',
  info: { title: 'items', version: '1' },
  paths: {
    '/items/{id}': {
      get: {
        operationId: 'getItem',
        parameters: [{ name: 'id', in: 'path', required: true, schema: { type: 'string', maxLength: 64 } }],
        responses: {
          200: {
            description: 'The item',
            content: { 'application/json': { schema: { $ref: '#/components/schemas/Item' } } },
          },
          404: { description: 'No such item' },
        },
      },
    },
  },
  components: {
    schemas: {
      Item: {
        type: 'object',
        required: ['id', 'name', 'price'],
        properties: { id: { type: 'string' }, name: { type: 'string' }, price: { type: 'number' }, tags: { type: 'array', items: { type: 'string' } } },
      },
    },
  },
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const server = createServer((request, response) => {
    request.resume()
    request.on('end', () => {
      const id = /^\/items\/([^/?]+)/.exec(request.url ?? '')?.[1]
      if (id === undefined) {
        response.writeHead(404).end()
        return
      }
      const body = JSON.stringify({ id: decodeURIComponent(id), name: 'item', price: 12.5, tags: ['a', 'b'] })
      response.writeHead(200, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) }).end(body)
    })
  })
  server.keepAliveTimeout = 65_000
  server.listen(0, '127.0.0.1', () => { announce((server.address() as AddressInfo).port) })
}
