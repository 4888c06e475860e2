import { z } from 'zod'
import type { FastifyInstance, InjectOptions } from 'fastify'
import { defineTool } from '../../src/index.js'
import { hashApiKey } from '../../src/services/auth/api-keys.js'

/** Two requesters, two approvers: who asks and who decides are always different keys. */
export const KEYS = { alice: 'alice-key-0123456789', carol: 'carol-key-0123456789', bob: 'bob-key-0123456789', dave: 'dave-key-0123456789' } as const
export const API_KEYS = [
  { principal: 'alice', sha256: hashApiKey(KEYS.alice), scopes: ['tools:read', 'tools:call'] },
  { principal: 'carol', sha256: hashApiKey(KEYS.carol), scopes: ['tools:read', 'tools:call'] },
  { principal: 'bob', sha256: hashApiKey(KEYS.bob), scopes: ['tools:read', 'tools:call', 'tools:approve'] },
  { principal: 'dave', sha256: hashApiKey(KEYS.dave), scopes: ['tools:read', 'tools:approve'] },
]

/** `pay` needs approval above 100; `executions` counts its runs, so a test proves what ran. */
export function approvalTools (executions: string[]) {
  return [
    defineTool({
      id: 'pay', kind: 'write', description: 'Pay an amount; above 100 a person approves first.',
      inputSchema: z.object({ to: z.string(), amount: z.number().int().positive() }).strict(),
      outputSchema: z.object({ paid: z.number(), to: z.string(), n: z.number() }),
      effects: ['financial', 'irreversible'], isReadOnly: false, isConcurrencySafe: false,
      requiresApproval: input => input.amount > 100,
      authorize () {},
      execute: async input => {
        executions.push(`pay:${input.to}:${input.amount}`)
        await new Promise(resolve => setTimeout(resolve, 20))
        return { paid: input.amount, to: input.to, n: executions.length }
      },
    }),
    defineTool({
      id: 'echo', kind: 'read', description: 'Echo.', isReadOnly: true, isConcurrencySafe: true,
      inputSchema: z.object({ text: z.string() }), outputSchema: z.object({ text: z.string() }),
      authorize () {}, execute: input => { executions.push(`echo:${input.text}`); return { text: input.text } },
    }),
    defineTool({
      id: 'sudo', kind: 'write', description: 'May escalate.', isReadOnly: false, isConcurrencySafe: false, supportsEscalation: true,
      inputSchema: z.object({}), outputSchema: z.object({ escalated: z.boolean() }),
      authorize () {}, execute: (_input, ctx) => { executions.push(`sudo:${String(ctx.escalated)}`); return { escalated: ctx.escalated } },
    }),
  ]
}

export function call (tool: string, body: unknown, key: string, headers: Record<string, string> = {}, query = ''): InjectOptions {
  return { method: 'POST', url: `/tools/${tool}${query}`, payload: body as object, headers: { 'x-api-key': key, ...headers } }
}

export async function decide (app: FastifyInstance, id: string, action: 'approve' | 'reject', key: string, note?: string) {
  return await app.inject({ method: 'POST', url: `/approvals/${id}/${action}`, headers: { 'x-api-key': key }, ...(note === undefined ? {} : { payload: { note } }) })
}
