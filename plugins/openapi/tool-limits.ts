import type { Limit } from '../../src/core/limits/limit.js'
import { ProblemSchema } from '../http/problem-schemas.js'

/*
 * How an operation documents the limits that cover its tool: the `RateLimit` and
 * `RateLimit-Policy` fields on its 200 and 429, a 429 that names the limits, and the
 * `x-limits` extension with each limit as data (what `GET /limits` shows, less what is left).
 */

export const LIMIT_HEADERS = {
  'RateLimit-Policy': { type: 'string', description: 'The limits that cover this call (IETF HTTPAPI draft): `"name";q=quota;w=window-seconds`, a budget with `qu="amount"`' },
  RateLimit: { type: 'string', description: 'What is left of each: `"name";r=remaining;t=seconds-to-reset`' },
}

export function limitedResponse (limits: readonly Limit[]): Record<string, unknown> {
  const refusing = limits.filter(limit => limit.over === 'refuse').map(limit => `\`${limit.name}\``)
  return {
    description: `Too many calls: a limit is used up (\`TOOLGATE_LIMIT_EXCEEDED\`, its \`limit\` names it, retry after \`Retry-After\`)${refusing.length === 0 ? '' : `, such as ${refusing.join(', ')}`}, or the session's queue is full (\`TOOLGATE_QUEUE_FULL\`) or a rate limit applies (\`TOOLGATE_RATE_LIMITED\`).`,
    headers: { 'Retry-After': { type: 'integer', description: 'Seconds until the call may fit' }, ...LIMIT_HEADERS },
    content: { 'application/problem+json': { schema: ProblemSchema } },
  }
}

export function limitExtension (limit: Limit): Record<string, unknown> {
  return {
    name: limit.name, kind: limit.kind, per: limit.per, over: limit.over, window: limit.window, declaredBy: limit.declaredBy,
    max: limit.kind === 'budget' ? limit.max : limit.calls,
    ...(limit.kind === 'rate' ? { burst: limit.burst } : {}),
    ...(limit.kind === 'budget' && limit.amountText !== undefined ? { amount: limit.amountText } : {}),
    ...(limit.description === undefined ? {} : { description: limit.description }),
  }
}
