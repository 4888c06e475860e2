import type { FastifyInstance } from 'fastify'
import { Redis } from 'ioredis'
import { defineTool, type AnyTool } from '../../src/index.js'
import { domainOf } from '../../src/services/principal-keys.js'
import declarations from '../fixtures/replica-tools/slots.js'
import { auth, KEYS } from '../http/helpers.js'
import type { Ran } from './intervals.js'
import { until } from './slot-replicas.js'

/** The replica-tools fixture, defined for in-process gateways. */
export const slotTools: AnyTool[] = declarations.map(declaration => defineTool(declaration))

/** One call of a fixture tool in `session`: its answer, or its status and problem code. */
export async function call (app: FastifyInstance, tool: string, ms: number, session = 'one-session'): Promise<{ status: number, ran?: Ran, headers: Record<string, unknown>, code?: string }> {
  const response = await app.inject({ method: 'POST', url: `/tools/${tool}`, payload: { ms }, headers: { ...auth(KEYS.caller), 'x-session-id': session } })
  const body = response.json() as Omit<Ran, 'tool'> & { code?: string }
  return response.statusCode === 200 ? { status: 200, ran: { tool, ...body }, headers: response.headers } : { status: response.statusCode, headers: response.headers, code: body.code }
}

/**
 * Until the Redis at `url` shows a holder of the session's slot under `prefix`: the call that
 * holds it has been granted. Waiting for that, not for a fixed time, keeps the order a test
 * means however slow the machine.
 */
export async function untilHeld (url: string, prefix: string, principal: string, session = 'one-session'): Promise<void> {
  const redis = new Redis(url)
  try {
    await until(async () => await redis.zcard(`${prefix}slots:d:{${domainOf(principal, session)}}:h`) > 0)
  } finally {
    redis.disconnect()
  }
}
