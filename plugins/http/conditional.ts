import { createHash } from 'node:crypto'
import type { FastifyReply, FastifyRequest } from 'fastify'

/**
 * Answer `body` (JSON text) with a strong ETag from its hash, or 304 with no body when the
 * client already holds it: a page that polls every few seconds pays a hash, not a transfer,
 * while nothing changed. Private: what it answers depends on who asks.
 */
export async function sendConditional (request: FastifyRequest, reply: FastifyReply, body: string): Promise<FastifyReply> {
  const etag = `"${createHash('sha256').update(body).digest('base64url').slice(0, 27)}"`
  void reply.header('etag', etag).header('cache-control', 'private, no-cache').header('vary', 'authorization, x-api-key, cookie')
  if (request.headers['if-none-match'] === etag) return await reply.code(304).send()
  return await reply.type('application/json; charset=utf-8').send(body)
}
