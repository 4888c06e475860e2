import type { IncomingMessage } from 'node:http'
import type { FastifyInstance } from 'fastify'
import fp from 'fastify-plugin'
import { newId } from '../../src/core/ids.js'

/** A caller's id is honoured only when it is safe to put in a log line and a header. */
const SAFE_ID = /^[\w.:@-]{1,128}$/

/** Fastify's `genReqId`: the caller's `X-Request-Id` when it is safe, else a new id (`newId`). */
export function requestIdOf (raw: IncomingMessage): string {
  const sent = raw.headers['x-request-id']
  return typeof sent === 'string' && SAFE_ID.test(sent) ? sent : newId()
}

/** Return `X-Request-Id` on every response, errors and 404s included. */
export const requestIdPlugin = fp(async function requestId (app: FastifyInstance) {
  app.addHook('onRequest', (request, reply, done) => {
    void reply.header('x-request-id', request.id)
    done()
  })
}, { name: 'toolgate-request-id' })
