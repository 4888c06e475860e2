import type { FastifyInstance } from 'fastify'
import type { ZodTypeProvider } from 'fastify-type-provider-zod'
import { z } from 'zod'
import { SCOPES, type GatewayApp } from '../../src/core/app-context.js'
import type { AnyTool, ToolCatalog } from '../../src/index.js'
import { compileGlob, requireScope } from '../../src/services/auth/index.js'
import type { Config } from '../../src/services/config.js'
import { listingOf, ToolListingSchema } from '../../src/services/tool-listing.js'
import { operatorFor } from '../../src/services/upstreams/operator.js'
import type { Upstreams } from '../../src/services/upstreams/upstreams.js'
import { sendConditional } from '../http/conditional.js'
import { problemResponses } from '../http/problem-schemas.js'
import { limitExtension } from '../openapi/tool-limits.js'
import { SECURITY } from '../openapi/tool-operation.js'

const RuleText = z.union([z.boolean(), z.string()]).describe('A constant, or a CEL expression over `input` and `principal`')

const ConsoleToolSchema = ToolListingSchema.extend({
  state: z.enum(['serving', 'starting', 'down', 'closed']).describe('`serving`, or the state of the upstream it runs on (its calls answer 503 until it is up)'),
  rules: z.object({ active: RuleText.optional(), authorize: RuleText.optional(), requiresApproval: RuleText.optional() })
    .describe('The operator\'s rules for it in the upstreams file (a fronted tool); a declared tool\'s own are code, named by `approval`'),
  approval: z.array(z.object({
    by: z.enum(['declaration', 'escalation', 'rule']).describe('Its declaration asks (always or by a predicate), it supports escalation, or an operator\'s approval rule names it'),
    principal: z.string().optional().describe('A rule\'s principal (`*`: everyone)'),
    approvers: z.array(z.string()).optional(),
  })).describe('Why a call of it may wait for a person; empty when none can'),
  limits: z.array(z.record(z.string(), z.unknown())).describe('The limits that cover it, as `x-limits` in its OpenAPI operation'),
}).meta({ id: 'ConsoleTool' })
type ConsoleTool = z.output<typeof ConsoleToolSchema>

export interface ConsoleCatalogOptions {
  readonly catalog: ToolCatalog<GatewayApp>
  readonly upstreams?: Upstreams
  readonly approvalRules: Config['approvalRules']
  readonly defaultTimeoutMs: number
}

/**
 * `GET /console/tools`: every tool serving, with what an operator asks of it beyond its listing:
 * the state of where it runs, the operator's rules, why it may wait for approval, the limits
 * over it. Conditional (ETag): the console reads it again only when something changed.
 */
export async function consoleCatalogRoutes (parent: FastifyInstance, options: ConsoleCatalogOptions): Promise<void> {
  const app = parent.withTypeProvider<ZodTypeProvider>()
  const rules = options.approvalRules.map(rule => ({ ...rule, globs: rule.tools.map(compileGlob) }))
  const viewOf = (tool: AnyTool<GatewayApp>, states: ReadonlyMap<string, string>): ConsoleTool => {
    const operator = options.upstreams === undefined || tool.origin === undefined ? {} : operatorFor(tool.id, options.upstreams.file.tools)
    const approval: ConsoleTool['approval'] = []
    if (tool.requiresApproval !== undefined && tool.requiresApproval !== false) approval.push({ by: 'declaration' })
    if (tool.supportsEscalation === true) approval.push({ by: 'escalation' })
    for (const rule of rules) if (rule.globs.some(glob => glob.test(tool.id))) approval.push({ by: 'rule', principal: rule.principal, approvers: [...rule.approvers] })
    return {
      ...listingOf(tool, options.defaultTimeoutMs),
      state: (tool.origin === undefined ? 'serving' : stateOf(states.get(tool.origin.server))),
      rules: {
        ...(operator.active === undefined ? {} : { active: operator.active }),
        ...(operator.authorize === undefined ? {} : { authorize: operator.authorize }),
        ...(operator.requiresApproval === undefined ? {} : { requiresApproval: operator.requiresApproval }),
      },
      approval,
      limits: options.catalog.limits.of(tool).map(limitExtension),
    }
  }
  app.get('/console/tools', {
    config: { approvalsSession: true },
    schema: {
      operationId: 'listConsoleTools', tags: ['gateway'], summary: 'Every tool serving, with its rules, approvals, limits and state',
      description: 'What the console\'s catalog shows: each tool\'s listing (as `GET /tools`, with who declared each field of a fronted tool), the state of the upstream it runs on, the operator\'s rules, why a call may wait for approval and the limits over it. Answers 304 to `If-None-Match` while nothing changed. Needs the scope `gateway:read`.',
      security: SECURITY,
      response: { 200: z.object({ version: z.number().int().describe('The catalog\'s version: it grows at every reload'), tools: z.array(ConsoleToolSchema) }), 304: z.null(), ...problemResponses([401, 403]) },
    },
  }, async (request, reply) => {
    requireScope(request.principal, SCOPES.gatewayRead)
    const states = new Map((options.upstreams?.status() ?? []).map(status => [status.name, status.state]))
    const set = options.catalog.current
    return await sendConditional(request, reply, JSON.stringify({ version: set.version, tools: set.tools.map(tool => viewOf(tool, states)) }))
  })
}

function stateOf (upstream: string | undefined): ConsoleTool['state'] {
  return upstream === undefined || upstream === 'up' ? 'serving' : upstream as ConsoleTool['state']
}
