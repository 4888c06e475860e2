import type { FastifyInstance } from 'fastify'
import type { ZodTypeProvider } from 'fastify-type-provider-zod'
import { z } from 'zod'
import { SCOPES, type GatewayApp, type GatewayFacts } from '../../src/core/app-context.js'
import type { ToolCatalog } from '../../src/core/catalog.js'
import { LIMIT_ACTIONS, LIMIT_SCOPES } from '../../src/core/limits/declaration.js'
import type { Limit } from '../../src/core/limits/limit.js'
import { reportOf } from '../../src/core/limits/report.js'
import { requireScope } from '../../src/services/auth/index.js'
import { problemResponses } from '../http/problem-schemas.js'
import { SECURITY } from '../openapi/tool-operation.js'
import { CallHeaders } from '../tools/call-schemas.js'
import { gatewayAppOf, visibleToolsOf } from '../tools/gateway-app.js'

const LimitStatus = z.object({
  name: z.string().describe('An operator\'s limit by its key in the upstreams file; a tool\'s own as `{tool}.{name}`'),
  kind: z.enum(['rate', 'quota', 'budget']),
  per: z.enum(LIMIT_SCOPES).describe('Whose calls share the count: yours, your session\'s (`X-Session-Id`), or everyone\'s'),
  over: z.enum(LIMIT_ACTIONS).describe('Past it: `refuse` (429) or `approve` (the call waits for a person)'),
  window: z.string().describe('As declared: a duration (`1h`) or a calendar window in UTC (`day`, `week`, `month`)'),
  windowSeconds: z.number().int(),
  max: z.number().describe('Calls per window, or the budget\'s maximum amount'),
  remaining: z.number().describe('What is left for you now: calls, or amount'),
  resetSeconds: z.number().int().describe('Seconds until the count is whole again'),
  declaredBy: z.enum(['operator', 'tool']),
  description: z.string().optional(),
  amount: z.string().optional().describe('A budget\'s amount per call: a CEL expression over `input`'),
  tools: z.array(z.string()).describe('The tools you may call that it covers'),
}).meta({ id: 'LimitStatus' })

/** Every limit that covers a tool the caller may call, with what is left to them: `GET /limits`. */
export async function limitRoutes (parent: FastifyInstance, options: { readonly catalog: ToolCatalog<GatewayApp>, readonly facts: GatewayFacts }): Promise<void> {
  const app = parent.withTypeProvider<ZodTypeProvider>()
  const { catalog, facts } = options
  app.get('/limits', {
    schema: {
      operationId: 'listLimits', tags: ['gateway'], summary: 'The rates, quotas and budgets that apply to you, and what is left',
      description: 'Each limit that covers a tool you may call: its kind, window and maximum, what is left of it for you (for a session limit, in the session of `X-Session-Id`), and which tools it covers. Reading it spends nothing.',
      security: SECURITY, headers: CallHeaders.pick({ 'x-session-id': true }),
      response: { 200: z.object({ limits: z.array(LimitStatus) }), ...problemResponses([400, 401, 403, 503]) },
    },
  }, async request => {
    requireScope(request.principal, SCOPES.read)
    const appOfRequest = gatewayAppOf(request, facts)
    const covering = new Map<string, { limit: Limit, tools: string[] }>()
    for (const tool of visibleToolsOf(app, request, catalog.current, facts)) {
      for (const limit of catalog.limits.of(tool)) {
        const entry = covering.get(limit.name) ?? { limit, tools: [] }
        entry.tools.push(tool.id)
        covering.set(limit.name, entry)
      }
    }
    const entries = [...covering.values()]
    // Kept as the calls keep it (`GatewayCalls` binds the principal as requester, the domain as session).
    const caller = { principal: appOfRequest.principal.id, session: appOfRequest.domain }
    const uses = await catalog.limits.standing(entries.map(entry => entry.limit), caller)
    const byName = new Map(uses.map(use => [use.limit.name, use]))
    return {
      limits: entries.flatMap(({ limit, tools }) => {
        const use = byName.get(limit.name)
        if (use === undefined) return []
        const { spends: _, ...report } = reportOf(use)
        return [{ ...report, declaredBy: limit.declaredBy, ...(limit.kind === 'budget' && limit.amountText !== undefined ? { amount: limit.amountText } : {}), tools }]
      }),
    }
  })
}
