import { z } from 'zod'
import type { AnyTool, ToolErrorDeclaration } from '../../src/index.js'
import { ProblemSchema, problemResponses, statusText } from '../http/problem-schemas.js'

/*
 * The problem responses of one tool's operation: the gateway's statuses for this call
 * (`callStatusesOf`), and the tool's own declared failures (`errors`). A status the tool
 * declares says which of its codes it answers with, and why; a status only the tool answers
 * types `code` as exactly its declared codes, so a generated client can switch on them.
 */

type Response = Record<string, unknown>

/** Every problem response of `tool`'s operation, given the statuses the gateway answers on it. */
export function toolProblemResponses (tool: AnyTool, gatewayStatuses: readonly number[]): Record<number, Response> {
  const declared = new Map<number, ToolErrorDeclaration[]>()
  for (const entry of tool.errors) declared.set(entry.status, [...declared.get(entry.status) ?? [], entry])
  const responses: Record<number, Response> = problemResponses(gatewayStatuses.filter(status => !declared.has(status)))
  for (const [status, entries] of declared) {
    const shared = gatewayStatuses.includes(status)
    const codes = entries.map(entry => `\`${entry.code}\`: ${entry.description}`).join('; ')
    responses[status] = {
      description: `${shared ? `${statusText(status)}; the tool's own:` : 'The tool\'s own failure:'} ${codes}`,
      content: { 'application/problem+json': { schema: shared ? ProblemSchema : ownProblem(entries.map(entry => entry.code)) } },
    }
  }
  return responses
}

function ownProblem (codes: readonly string[]): z.ZodType {
  return ProblemSchema.and(z.looseObject({ code: z.enum(codes as [string, ...string[]]).describe('The tool\'s own code') }))
}

/** The `x-tool-errors` extension: the declared failures as data, for clients and checks. */
export function toolErrorsExtension (tool: AnyTool): Array<{ status: number, code: string, description: string }> {
  return tool.errors.map(({ status, code, description }) => ({ status, code, description }))
}
